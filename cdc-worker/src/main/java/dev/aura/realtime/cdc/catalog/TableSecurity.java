package dev.aura.realtime.cdc.catalog;

import dev.aura.realtime.cdc.identity.ClientRoles;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Cached per-table security facts, read from the catalog (platform SQL; no tenant code runs):
 * whether row level security is on ({@code pg_class.relrowsecurity}), the primary key columns
 * with their SQL types, and which columns each client role may select, asked of the project's role
 * standing for it ({@code ProjectIdentity}; it holds the schema's {@code USAGE} and inherits what is
 * granted to the client role): {@code has_schema_privilege(role, schema, 'USAGE') AND
 * has_column_privilege(role, table, column, 'SELECT')}, which counts table-level grants, column
 * grants and grants to PUBLIC. The facts stay keyed by client role name.
 * Entries expire after {@code ttl}, so {@code ALTER TABLE ... ENABLE ROW LEVEL SECURITY}, a
 * {@code GRANT} or a {@code REVOKE} takes effect within that time (docs/design.md C7).
 * Thread-safe.
 */
public final class TableSecurity {
    /**
     * Facts about one table.
     *
     * @param exists false when the table is gone (then nothing else is known)
     * @param rowSecurity {@code relrowsecurity}
     * @param pkColumns primary key columns, in key order
     * @param pkTypes their {@code format_type} names, usable in casts
     * @param columns every live column, in table order
     * @param selectable per client role ({@link ClientRoles#ALL}), the columns it may select
     * @param selectsTable the client roles with SELECT on the whole table (and USAGE on its
     *     schema): they may read every column, also one added after this was read
     */
    public record Facts(
            boolean exists,
            boolean rowSecurity,
            List<String> pkColumns,
            List<String> pkTypes,
            Set<String> columns,
            Map<String, Set<String>> selectable,
            Set<String> selectsTable) {

        static final Facts MISSING = new Facts(false, false, List.of(), List.of(), Set.of(), Map.of(), Set.of());

        /** The columns {@code pgRole} may select (empty for a role that is not a client role). */
        public Set<String> selectable(String pgRole) {
            return selectable.getOrDefault(pgRole, Set.of());
        }

        /** Whether {@code pgRole} may select every primary key column (Supabase's test for {@code Error 401}). */
        public boolean selectsKey(String pgRole) {
            return !pkColumns.isEmpty() && selectable(pgRole).containsAll(pkColumns);
        }
    }

    private record Cached(Facts facts, long loadedAtMs) {}

    private static final String SQL = """
            SELECT c.relrowsecurity, a.attname, format_type(a.atttypid, a.atttypmod),
                   (SELECT k.ord FROM pg_index i, unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                     WHERE i.indrelid = c.oid AND i.indisprimary AND k.attnum = a.attnum),
                   has_schema_privilege(?, c.relnamespace, 'USAGE')
                       AND has_column_privilege(?, c.oid, a.attnum, 'SELECT'),
                   has_schema_privilege(?, c.relnamespace, 'USAGE')
                       AND has_column_privilege(?, c.oid, a.attnum, 'SELECT'),
                   has_schema_privilege(?, c.relnamespace, 'USAGE') AND has_table_privilege(?, c.oid, 'SELECT'),
                   has_schema_privilege(?, c.relnamespace, 'USAGE') AND has_table_privilege(?, c.oid, 'SELECT')
              FROM pg_class c
              JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
             WHERE c.oid = to_regclass(format('%I.%I', ?::text, ?::text))
             ORDER BY a.attnum""";

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
    public Facts facts(String projectId, String schema, String table) throws SQLException {
        String key = projectId + "\u0000" + schema + "\u0000" + table;
        Cached c = cache.get(key);
        long now = clock.millis();
        if (c != null && now - c.loadedAtMs < ttl.toMillis()) {
            return c.facts;
        }
        Facts f = load(new ProjectIdentity(projectId), schema, table);
        if (cache.size() > 100_000) {
            cache.clear(); // a bound: entries are cheap to reload, and this many tables is unusual
        }
        cache.put(key, new Cached(f, now));
        return f;
    }

    /**
     * The facts read from the catalog now (and cached for {@link #facts}): for a join-time check
     * judged because the table's catalog version changed ({@code ProjectCatalog.versions}).
     */
    public Facts freshFacts(String projectId, String schema, String table) throws SQLException {
        Facts f = load(new ProjectIdentity(projectId), schema, table);
        if (cache.size() > 100_000) {
            cache.clear();
        }
        cache.put(projectId + "\u0000" + schema + "\u0000" + table, new Cached(f, clock.millis()));
        return f;
    }

    private Facts load(ProjectIdentity project, String schema, String table) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(SQL)) {
            // the project's roles: they hold the schema's USAGE and inherit the client roles' grants
            String anonRole = project.role(ClientRoles.ANON);
            String authenticatedRole = project.role(ClientRoles.AUTHENTICATED);
            String[] roles = {anonRole, authenticatedRole, anonRole, authenticatedRole};
            for (int r = 0; r < roles.length; r++) {
                ps.setString(1 + 2 * r, roles[r]);
                ps.setString(2 + 2 * r, roles[r]);
            }
            ps.setString(9, schema);
            ps.setString(10, table);
            try (ResultSet rs = ps.executeQuery()) {
                boolean exists = false;
                boolean rls = false;
                Map<Integer, String[]> pk = new TreeMap<>();
                Set<String> columns = new LinkedHashSet<>();
                Set<String> anon = new HashSet<>();
                Set<String> authenticated = new HashSet<>();
                Set<String> selectsTable = new HashSet<>();
                while (rs.next()) {
                    exists = true;
                    rls = rs.getBoolean(1);
                    String column = rs.getString(2);
                    columns.add(column);
                    int ord = rs.getInt(4);
                    if (!rs.wasNull()) {
                        pk.put(ord, new String[] {column, rs.getString(3)});
                    }
                    if (rs.getBoolean(5)) {
                        anon.add(column);
                    }
                    if (rs.getBoolean(6)) {
                        authenticated.add(column);
                    }
                    if (rs.getBoolean(7)) {
                        selectsTable.add(ClientRoles.ANON);
                    }
                    if (rs.getBoolean(8)) {
                        selectsTable.add(ClientRoles.AUTHENTICATED);
                    }
                }
                if (!exists) {
                    return Facts.MISSING;
                }
                List<String> pkColumns = new ArrayList<>();
                List<String> pkTypes = new ArrayList<>();
                pk.values().forEach(p -> {
                    pkColumns.add(p[0]);
                    pkTypes.add(p[1]);
                });
                Map<String, Set<String>> selectable = new HashMap<>();
                selectable.put(ClientRoles.ANON, Set.copyOf(anon));
                selectable.put(ClientRoles.AUTHENTICATED, Set.copyOf(authenticated));
                return new Facts(
                        true,
                        rls,
                        List.copyOf(pkColumns),
                        List.copyOf(pkTypes),
                        Collections.unmodifiableSet(columns),
                        Map.copyOf(selectable),
                        Set.copyOf(selectsTable));
            }
        }
    }
}
