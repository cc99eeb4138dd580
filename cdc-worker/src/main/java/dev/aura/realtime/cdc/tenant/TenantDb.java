package dev.aura.realtime.cdc.tenant;

import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import javax.sql.DataSource;

/**
 * The pool for <em>tenant SQL</em>: statements that evaluate SQL a tenant wrote, i.e. RLS policies
 * (read under {@code SET LOCAL ROLE}) and casts to a tenant's column types (whose input functions
 * and domain checks the tenant may define). Every such statement of the worker is in this class,
 * runs in a transaction that is rolled back, and never touches {@code aura_platform}; platform
 * SQL runs on {@code platform.PlatformDb}. Both wrap the same pool today.
 *
 * <p>Thread-safe; every call takes its own connection.
 */
public final class TenantDb {
    private final DataSource pool;

    public TenantDb(DataSource pool) {
        this.pool = pool;
    }

    /**
     * A table's primary key, as {@code format_type} names usable in casts.
     *
     * @param schema the table's schema
     * @param table the table
     * @param columns primary key column names, in key order
     * @param types their types, in the same order
     */
    public record KeyedTable(String schema, String table, List<String> columns, List<String> types) {}

    /**
     * Which of {@code keys} the role with these JWT claims may read, in one rolled-back
     * transaction: {@code SET LOCAL ROLE <role>; set_config('request.jwt.claims', <claims>, true);
     * SELECT <pk> FROM <table> WHERE <pk> = ANY(<keys>)}. The table's RLS policies decide.
     *
     * @param pgRole {@code aura_anon} or {@code aura_authenticated}
     * @param claims the JWT claims as JSON text
     * @param keys primary keys, each as its column values (as text) joined by NUL
     * @return the visible subset of {@code keys}, in the same encoding
     * @throws SQLException when the check raises (e.g. a policy casting a malformed claim) or
     *     Postgres is unreachable
     */
    public Set<String> visibleKeys(String pgRole, String claims, KeyedTable table, Collection<String> keys)
            throws SQLException {
        Set<String> visible = new HashSet<>();
        if (keys.isEmpty()) {
            return visible;
        }
        int n = table.columns().size();
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL ROLE " + pgRole);
                }
                try (PreparedStatement ps = c.prepareStatement("SELECT set_config('request.jwt.claims', ?, true)")) {
                    ps.setString(1, claims);
                    ps.execute();
                }
                try (PreparedStatement ps = c.prepareStatement(visibleKeysSql(table))) {
                    List<String[]> parts =
                            keys.stream().map(k -> k.split("\u0000", -1)).toList();
                    for (int col = 0; col < n; col++) {
                        final int cc = col;
                        Array arr = c.createArrayOf(
                                "text", parts.stream().map(p -> p[cc]).toArray());
                        ps.setArray(col + 1, arr);
                    }
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            StringBuilder k = new StringBuilder();
                            for (int col = 1; col <= n; col++) {
                                k.append(col == 1 ? "" : "\u0000").append(rs.getString(col));
                            }
                            visible.add(k.toString());
                        }
                    }
                }
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
        return visible;
    }

    /** {@code SELECT pk::text... FROM t WHERE pk = ANY(?)} (one key column) or {@code (pk...) IN (unnest...)}. */
    private static String visibleKeysSql(KeyedTable table) {
        List<String> cols = table.columns();
        List<String> types = table.types();
        int n = cols.size();
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int c = 0; c < n; c++) {
            sql.append(c == 0 ? "" : ", ").append(ident(cols.get(c))).append("::text");
        }
        sql.append(" FROM ")
                .append(ident(table.schema()))
                .append('.')
                .append(ident(table.table()))
                .append(" WHERE ");
        if (n == 1) {
            sql.append(ident(cols.get(0)))
                    .append(" = ANY(?::text[]::")
                    .append(types.get(0))
                    .append("[])");
            return sql.toString();
        }
        sql.append('(');
        for (int c = 0; c < n; c++) {
            sql.append(c == 0 ? "" : ", ").append(ident(cols.get(c)));
        }
        sql.append(") IN (SELECT ");
        for (int c = 0; c < n; c++) {
            sql.append(c == 0 ? "" : ", ").append("k").append(c).append("::").append(types.get(c));
        }
        sql.append(" FROM unnest(");
        for (int c = 0; c < n; c++) {
            sql.append(c == 0 ? "" : ", ").append("?::text[]");
        }
        sql.append(") AS u(");
        for (int c = 0; c < n; c++) {
            sql.append(c == 0 ? "" : ", ").append("k").append(c);
        }
        return sql.append("))").toString();
    }

    /**
     * Whether {@code value} casts to the type, asked of Postgres itself so "castable" means
     * exactly what the database accepts (a join-time filter check).
     *
     * @param formattedType a {@code format_type} name read from the catalog
     * @throws SQLException when the check fails for another reason than the value (SQLState
     *     classes 22 and 42 mean "does not cast")
     */
    public boolean casts(String value, String formattedType) throws SQLException {
        try (Connection c = pool.getConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement("SELECT CAST(?::text AS " + formattedType + ")")) {
                ps.setString(1, value);
                ps.executeQuery().close();
                return true;
            } catch (SQLException e) {
                if (e.getSQLState() != null
                        && (e.getSQLState().startsWith("22") || e.getSQLState().startsWith("42"))) {
                    return false;
                }
                throw e;
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }
}
