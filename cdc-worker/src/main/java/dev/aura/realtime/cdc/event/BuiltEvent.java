package dev.aura.realtime.cdc.event;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * A change turned into the client payload, before matching.
 *
 * @param eventId {@code <commit LSN>:<ordinal>}
 * @param projectId owning project
 * @param schemaName real schema (for RLS queries; never sent to clients)
 * @param table table name
 * @param type INSERT, UPDATE, DELETE or TRUNCATE
 * @param data the postgres_changes {@code data} object (schema already {@code public})
 * @param record new row (null for DELETE/TRUNCATE), as sent
 * @param oldRecord old row (null for INSERT/TRUNCATE), as sent
 * @param columnTypes column name → typname
 * @param primaryKey primary key column names
 */
public record BuiltEvent(
        String eventId,
        String projectId,
        String schemaName,
        String table,
        String type,
        ObjectNode data,
        JsonNode record,
        JsonNode oldRecord,
        Map<String, String> columnTypes,
        List<String> primaryKey) {

    /** The row a filter is tested against: the new row, or the old one for DELETE (Supabase's rule). */
    public JsonNode filterRow() {
        return "DELETE".equals(type) ? oldRecord : record;
    }
}
