package dev.aura.realtime.cdc.tenant;

import java.util.List;

/**
 * The SQL text of RLS checks, built from catalog names only (identifiers quoted, types as
 * {@code format_type} printed them); values always travel as parameters.
 */
final class KeyQueries {
    private KeyQueries() {}

    /**
     * All keys in one statement: {@code SELECT pk::text... FROM t WHERE pk = ANY(?)} (one key
     * column) or {@code WHERE (pk...) IN (SELECT ... FROM unnest(?, ...))}; one text array
     * parameter per key column.
     */
    static String batch(TenantDb.KeyedTable table) {
        List<String> cols = table.columns();
        List<String> types = table.types();
        int n = cols.size();
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int c = 0; c < n; c++) {
            sql.append(c == 0 ? "" : ", ").append(ident(cols.get(c))).append("::text");
        }
        sql.append(" FROM ").append(qualified(table)).append(" WHERE ");
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
     * One key, for {@code aura_rls.visible_each}: {@code SELECT EXISTS (SELECT 1 FROM t WHERE
     * pk1 = $1[1]::type1 AND ...)}, the key's column values as one text array.
     */
    static String single(TenantDb.KeyedTable table) {
        StringBuilder sql = new StringBuilder("SELECT EXISTS (SELECT 1 FROM ")
                .append(qualified(table))
                .append(" WHERE ");
        for (int c = 0; c < table.columns().size(); c++) {
            sql.append(c == 0 ? "" : " AND ")
                    .append(ident(table.columns().get(c)))
                    .append(" = ($1)[")
                    .append(c + 1)
                    .append("]::")
                    .append(table.types().get(c));
        }
        return sql.append(')').toString();
    }

    /** {@code pg_catalog, "<schema>"}: built-ins first, then the project's own names (its "public"). */
    static String searchPath(String schema) {
        return "pg_catalog, " + ident(schema);
    }

    private static String qualified(TenantDb.KeyedTable table) {
        return ident(table.schema()) + "." + ident(table.table());
    }

    static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }
}
