package dev.aura.realtime.cdc.catalog;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads the enabled tables from {@code aura_platform} on a given connection: the tables enabled
 * through the control API, and the {@code messages} table of every project whose realtime schema
 * is provisioned ({@code provision.RealtimeSchemas}), which the same slot captures for Broadcast from
 * Database (docs/design.md H2).
 */
final class EnabledTablesLoader {
    /**
     * The enabled tables; every partition (at any depth, in the same schema) of an enabled
     * partitioned table with the enabled table it is delivered under and that table's depth in
     * its own partition tree (docs/design.md C5: a change of a partition is delivered under the
     * name of its highest enabled ancestor); and each provisioned project's {@code messages}.
     */
    private static final String QUERY = """
            SELECT p.project_id::text, p.schema_name, rt.table_name, NULL::text, 0
              FROM aura_platform.realtime_tables rt
              JOIN aura_platform.projects p USING (project_id)
             WHERE rt.enabled
            UNION ALL
            SELECT p.project_id::text, p.schema_name, c.relname::text, rt.table_name,
                   (SELECT count(*) FROM pg_partition_ancestors(t.relid)) - t.level
              FROM aura_platform.realtime_tables rt
              JOIN aura_platform.projects p USING (project_id)
              CROSS JOIN LATERAL pg_partition_tree(to_regclass(format('%I.%I', p.schema_name, rt.table_name))) t
              JOIN pg_class c ON c.oid = t.relid
              JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE rt.enabled AND t.level > 0 AND n.nspname = p.schema_name
            UNION ALL
            SELECT p.project_id::text, 'project_' || replace(p.project_id::text, '-', '_') || '_realtime', 'messages',
                   NULL::text, 0
              FROM aura_platform.projects p
             WHERE p.realtime_schema_version >= 1
             ORDER BY 1, 2, 3, 5""";

    /** Enabled tables whose UPDATE/DELETE wal2json drops: no replica identity at all (C6). */
    private static final String WITHOUT_IDENTITY = """
            SELECT format('%I.%I', p.schema_name, rt.table_name)
              FROM aura_platform.realtime_tables rt
              JOIN aura_platform.projects p USING (project_id)
              JOIN pg_namespace n ON n.nspname = p.schema_name
              JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = rt.table_name
             WHERE rt.enabled
               AND (c.relreplident = 'n'
                    OR (c.relreplident = 'd' AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))
                    OR (c.relreplident = 'i' AND NOT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisreplident)))
             ORDER BY 1""";

    private EnabledTablesLoader() {}

    /**
     * Enabled tables with neither a primary key nor another replica identity: wal2json silently
     * drops their UPDATE and DELETE (only INSERT and TRUNCATE arrive).
     *
     * @return quoted {@code schema.table} names
     * @throws SQLException on query failure
     */
    static List<String> withoutReplicaIdentity(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement(WITHOUT_IDENTITY);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getString(1));
            }
        }
        return out;
    }

    /** @throws SQLException on query failure */
    static EnabledTables load(Connection c) throws SQLException {
        List<EnabledTable> out = new ArrayList<>();
        Map<String, String> roots = new HashMap<>();
        Map<String, Integer> rootDepth = new HashMap<>();
        try (PreparedStatement ps = c.prepareStatement(QUERY);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                String schema = rs.getString(2);
                String table = rs.getString(3);
                String root = rs.getString(4);
                if (root == null) {
                    out.add(new EnabledTable(rs.getString(1), schema, table));
                    continue;
                }
                String key = EnabledTables.key(schema, table);
                int depth = rs.getInt(5);
                Integer known = rootDepth.get(key);
                if (known == null || depth < known) {
                    rootDepth.put(key, depth);
                    roots.put(key, root);
                }
            }
        }
        return new EnabledTables(out, roots);
    }
}
