package dev.aura.realtime.front.fanout;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * One postgres_changes binding of a joined channel: what the fan-out matches change events
 * against ({@code subId} is in the event's {@code allowed_sub_ids}) and the ids it pushes.
 *
 * @param id the server id realtime-js pairs the binding with (deterministic, positive 32-bit)
 * @param subId the registry subscription id (uuid, fresh per join)
 * @param event {@code *}, INSERT, UPDATE or DELETE, upper-cased for the registry
 * @param table the table, {@code *} when the client named none
 * @param filter the filter text or null
 * @param echo the binding as the reply echoes it: the client's own event/schema/table/filter values plus id
 * @param select the {@code select} columns, or null for every column
 */
public record PostgresBinding(
        int id,
        String subId,
        String event,
        String table,
        String filter,
        ObjectNode echo,
        java.util.List<String> select) {
    public PostgresBinding(int id, String subId, String event, String table, String filter, ObjectNode echo) {
        this(id, subId, event, table, filter, echo, null);
    }
}
