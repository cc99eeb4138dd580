package dev.aura.realtime.cdc.catalog;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;

/**
 * The projects and their realtime tables in {@code aura_platform}, and the catalog facts the
 * control API and the join-time subscription check need about a project's tables. Platform SQL
 * only: every statement runs on the privileged {@link PlatformDb}. Thread-safe (stateless).
 */
public final class ProjectCatalog {
    private final PlatformDb db;

    public ProjectCatalog(PlatformDb db) {
        this.db = db;
    }

    /** Outcome of {@link #setRealtime}. */
    public enum SetOutcome {
        DONE,
        UNKNOWN_PROJECT,
        NO_SUCH_TABLE,
        NO_PRIMARY_KEY
    }

    /** One enabled table as the control API lists it. */
    public record RealtimeTable(String table, Instant updatedAt) {}

    /**
     * A column's type: {@code typname} (what realtime-js converts by) and {@code format_type}
     * (usable in a cast).
     */
    public record ColumnType(String typname, String formatted) {}

    /** The schema of a registered project. */
    public Optional<String> schemaOf(UUID project) throws SQLException {
        try (Connection c = db.connection()) {
            return Optional.ofNullable(schemaOf(c, project));
        }
    }

    /**
     * A project's private-channel settings (docs/design.md H1).
     *
     * @param schema the project's schema
     * @param privateOnly public channels are refused ({@code aura_platform.projects.private_only})
     */
    public record ChannelSettings(String schema, boolean privateOnly) {}

    /** The project's private-channel settings; empty for an unknown project. */
    public Optional<ChannelSettings> channelSettings(UUID project) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT schema_name, private_only FROM aura_platform.projects WHERE project_id = ?")) {
            ps.setObject(1, project);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next()
                        ? Optional.of(new ChannelSettings(rs.getString(1), rs.getBoolean(2)))
                        : Optional.empty();
            }
        }
    }

    /** Whether {@code aura_platform.realtime_tables} has the table enabled. */
    public boolean enabled(UUID project, String table) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT enabled FROM aura_platform.realtime_tables WHERE project_id = ? AND table_name = ?")) {
            ps.setObject(1, project);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** The type of a live column of {@code schema.table}; empty when there is no such column. */
    public Optional<ColumnType> columnType(String schema, String table, String column) throws SQLException {
        String sql = """
                SELECT t.typname, format_type(a.atttypid, NULL)
                  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                 WHERE a.attrelid = to_regclass(format('%I.%I', ?::text, ?::text))
                   AND a.attname = ? AND a.attnum > 0 AND NOT a.attisdropped""";
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, schema);
            ps.setString(2, table);
            ps.setString(3, column);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? Optional.of(new ColumnType(rs.getString(1), rs.getString(2))) : Optional.empty();
            }
        }
    }

    /**
     * Enables or disables realtime for a table, in one transaction. Enabling also sets
     * {@code REPLICA IDENTITY FULL} (wal2json needs it for complete UPDATE/DELETE rows) unless the
     * table has it already, and requires the table to exist with a primary key (wal2json drops
     * UPDATE/DELETE of a table without one, and RLS checks need a key). Idempotent.
     *
     * @param lockTimeout how long the {@code ALTER TABLE} may wait for the table's lock (a tenant's
     *     open transaction on it); then it fails with SQLState 55P03
     * @throws SQLException also 42501 when the platform login may not alter the table
     */
    public SetOutcome setRealtime(UUID project, String table, boolean enabled, Duration lockTimeout)
            throws SQLException {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("SELECT set_config('lock_timeout', ?, true)")) {
                    ps.setString(1, lockTimeout.toMillis() + "ms");
                    ps.execute();
                }
                SetOutcome outcome = setRealtime(c, project, table, enabled);
                if (outcome == SetOutcome.DONE) {
                    c.commit();
                } else {
                    c.rollback();
                }
                return outcome;
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
        }
    }

    private static SetOutcome setRealtime(Connection c, UUID project, String table, boolean enabled)
            throws SQLException {
        String schema = schemaOf(c, project);
        if (schema == null) {
            return SetOutcome.UNKNOWN_PROJECT;
        }
        if (enabled) {
            TableShape shape = shapeOf(c, schema, table);
            if (shape == null) {
                return SetOutcome.NO_SUCH_TABLE;
            }
            if (!shape.hasPrimaryKey()) {
                return SetOutcome.NO_PRIMARY_KEY;
            }
            if (!shape.replicaIdentityFull()) {
                try (Statement s = c.createStatement()) {
                    s.execute("ALTER TABLE " + ident(schema) + "." + ident(table) + " REPLICA IDENTITY FULL");
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("""
                INSERT INTO aura_platform.realtime_tables(project_id, table_name, enabled, updated_at)
                VALUES (?, ?, ?, now())
                ON CONFLICT (project_id, table_name) DO UPDATE SET enabled = excluded.enabled, updated_at = now()""")) {
            ps.setObject(1, project);
            ps.setString(2, table);
            ps.setBoolean(3, enabled);
            ps.executeUpdate();
        }
        return SetOutcome.DONE;
    }

    /** The project's enabled tables, by name. */
    public List<RealtimeTable> enabledTables(UUID project) throws SQLException {
        List<RealtimeTable> out = new ArrayList<>();
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement("""
                        SELECT table_name, updated_at FROM aura_platform.realtime_tables
                         WHERE project_id = ? AND enabled ORDER BY table_name""")) {
            ps.setObject(1, project);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new RealtimeTable(
                            rs.getString(1), rs.getTimestamp(2).toInstant()));
                }
            }
        }
        return out;
    }

    /** The version of the whole project's settings: what a binding on table {@code *} depends on. */
    public static final String ANY_TABLE = "*";

    /**
     * The catalog version of each of {@code tables} of the project, in one statement: a value that
     * changes whenever anything a join-time check reads of it changes (docs/design.md C7, "Join
     * storms"): the project's row (schema, settings), the table's {@code realtime_tables} row, and
     * the table's {@code pg_class} row (table grants, row level security, renames), its columns'
     * {@code pg_attribute} rows (added, dropped or retyped columns, column grants) and its primary
     * key's {@code pg_index} rows; each is its row's {@code xmin}, which any {@code UPDATE},
     * {@code GRANT}, {@code REVOKE} or {@code ALTER} of that row changes. {@link #ANY_TABLE} gives
     * the project row's version alone.
     *
     * @return table to version; empty for an unknown project
     */
    public java.util.Map<String, String> versions(UUID project, java.util.Collection<String> tables)
            throws SQLException {
        String sql = """
                SELECT t.name, p.xmin::text
                       || ':' || coalesce((SELECT n.xmin::text FROM pg_namespace n WHERE n.nspname = p.schema_name), '-')
                       || '/' || coalesce(r.xmin::text || ':' || r.enabled::text, '-')
                       || '/' || coalesce(k.oid::text || ':' || k.xmin::text, '-')
                       || '/' || coalesce((SELECT string_agg(a.attnum || ':' || a.xmin::text, ',' ORDER BY a.attnum)
                                             FROM pg_attribute a WHERE a.attrelid = k.oid AND a.attnum > 0), '')
                       || '/' || coalesce((SELECT string_agg(i.indexrelid::text || ':' || i.xmin::text, ','
                                                             ORDER BY i.indexrelid)
                                             FROM pg_index i WHERE i.indrelid = k.oid AND i.indisprimary), '')
                  FROM aura_platform.projects p
                 CROSS JOIN unnest(?::text[]) AS t(name)
                  LEFT JOIN aura_platform.realtime_tables r ON r.project_id = p.project_id AND r.table_name = t.name
                  LEFT JOIN pg_class k ON t.name <> '*'
                                      AND k.oid = to_regclass(format('%I.%I', p.schema_name, t.name))
                 WHERE p.project_id = ?""";
        java.util.Map<String, String> out = new java.util.HashMap<>();
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setArray(1, c.createArrayOf("text", tables.toArray()));
            ps.setObject(2, project);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return out;
    }

    private static String schemaOf(Connection c, UUID project) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT schema_name FROM aura_platform.projects WHERE project_id = ?")) {
            ps.setObject(1, project);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private record TableShape(boolean hasPrimaryKey, boolean replicaIdentityFull) {}

    /** @return null when the table does not exist */
    private static TableShape shapeOf(Connection c, String schema, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = k.oid AND i.indisprimary),
                       k.relreplident = 'f'
                  FROM pg_class k WHERE k.oid = to_regclass(format('%I.%I', ?::text, ?::text))""")) {
            ps.setString(1, schema);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new TableShape(rs.getBoolean(1), rs.getBoolean(2)) : null;
            }
        }
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }
}
