package dev.aura.realtime.front.protocol;

import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/**
 * Server ids of postgres_changes bindings: a positive 32-bit integer derived only from
 * (event, schema, table, filter, select), so identical parameters get identical ids on every
 * replica and across reconnects, and two bindings differing only in {@code select} get different
 * ids (realtime-js's {@code isSamePostgresFilter} treats them as different subscriptions). Never
 * 0: realtime-js treats a falsy id as "no id".
 */
public final class BindingIds {
    private BindingIds() {}

    public static int of(String event, String schema, String table, String filter) {
        return of(event, schema, table, filter, null);
    }

    /** @param select the {@code select} columns in the client's order, or null (same id as without) */
    public static int of(String event, String schema, String table, String filter, java.util.List<String> select) {
        CRC32C crc = new CRC32C();
        if (select != null) {
            crc.update(("select\u0000" + String.join("\u0000", select)).getBytes(StandardCharsets.UTF_8));
            crc.update(0x1E); // record separator: never produced without a select
        }
        for (String part : new String[] {event, schema, table, filter}) {
            byte[] bytes = (part == null ? "\u0000null" : part).getBytes(StandardCharsets.UTF_8);
            crc.update(bytes);
            crc.update(0x1F); // unit separator: ("ab","c") and ("a","bc") differ
        }
        int id = (int) (crc.getValue() & 0x7FFF_FFFFL);
        return id == 0 ? 1 : id;
    }
}
