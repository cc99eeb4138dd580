package dev.aura.realtime.cdc.platform;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cached per-table security facts for RLS checks, read from the catalog (platform SQL): whether row level security is on
 * ({@code pg_class.relrowsecurity}) and the primary key columns with their SQL types. Entries
 * expire after {@code ttl}, so {@code ALTER TABLE ... ENABLE ROW LEVEL SECURITY} takes effect
 * within that time. Thread-safe.
 */
public final class TableSecurity {
    /** Facts about one table; {@code pkTypes} are {@code format_type} names, usable in casts. */
    public record Facts(boolean rowSecurity, List<String> pkColumns, List<String> pkTypes) {}

    private record Cached(Facts facts, long loadedAtMs) {}

    private final PlatformDb db;
    private final Clock clock;
    private final Duration ttl;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();

    public TableSecurity(PlatformDb db, Clock clock, Duration ttl) {
        this.db = db;
        this.clock = clock;
        this.ttl = ttl;
    }

    /** @throws SQLException when the catalog query fails */
    public Facts facts(String schema, String table) throws SQLException {
        String key = schema + "\u0000" + table;
        Cached c = cache.get(key);
        long now = clock.millis();
        if (c != null && now - c.loadedAtMs < ttl.toMillis()) {
            return c.facts;
        }
        Facts f = load(schema, table);
        cache.put(key, new Cached(f, now));
        return f;
    }

    private Facts load(String schema, String table) throws SQLException {
        String sql = """
                SELECT c.relrowsecurity, a.attname, format_type(a.atttypid, a.atttypmod)
                  FROM pg_class c
                  LEFT JOIN pg_index i ON i.indrelid = c.oid AND i.indisprimary
                  LEFT JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord) ON true
                  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
                 WHERE c.oid = to_regclass(format('%I.%I', ?::text, ?::text))
                 ORDER BY k.ord""";
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, schema);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                boolean rls = false;
                List<String> cols = new ArrayList<>();
                List<String> types = new ArrayList<>();
                while (rs.next()) {
                    rls = rs.getBoolean(1);
                    if (rs.getString(2) != null) {
                        cols.add(rs.getString(2));
                        types.add(rs.getString(3));
                    }
                }
                return new Facts(rls, List.copyOf(cols), List.copyOf(types));
            }
        }
    }
}
