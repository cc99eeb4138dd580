package dev.aura.realtime.cdc.rls;

/**
 * The SQL text of the RLS checks' tenant statements ({@link KeyChecks}), built from catalog names
 * only (identifiers quoted, types as {@code format_type} printed them); values always travel in the
 * runner's {@code args} array ({@code $1}). Every query answers rows of {@code text[]}, the
 * runner's result type.
 *
 * <p>Keys are compared by value: each key column's text is cast to the column's type and compared
 * with {@code =} of that type, so a key whose text differs from {@code pk::text} ({@code timestamptz}
 * in another time zone, {@code numeric} 1.50, {@code char(n)} padding, {@code inet}) still matches.
 * A batch answers the ordinals of the visible keys, never key text.
 */
final class KeyQueries {
    private KeyQueries() {}

    /**
     * All {@code m} keys (distinct) in one statement. {@code $1} holds the keys column by column (the first
     * column's {@code m} values, then the second's, ...); each column's slice {@code a_c} is cast to
     * the column's type, and the statement is {@code SELECT ARRAY[k.i::text] FROM unnest(a_0, ...)
     * WITH ORDINALITY k(v0, ..., i) WHERE EXISTS (SELECT 1 FROM t WHERE t.c0 = ANY(a_0) AND ...
     * AND t.c0 = k.v0 AND ...)}. The {@code = ANY} conditions are restrictions of the table scan
     * (an index condition, or a leakproof filter evaluated before the policies), so the policies
     * are evaluated only for rows with these key values, never for the whole table.
     */
    static String batch(KeyChecks.KeyedTable table, int m) {
        int n = table.columns().size();
        if (n == 1) {
            // one key column: the plain index scan, each visible row answering its key's ordinal
            // (array_position compares with the type's own equality, as = ANY does); a third of
            // the planning of the join below (docs/performance-analysis-2026-12.md, "Per-project identity")
            String keys = "($1)::" + table.types().get(0) + "[]";
            String column = "t." + ident(table.columns().get(0));
            return "SELECT ARRAY[array_position(" + keys + ", " + column + ")::text] FROM " + qualified(table)
                    + " AS t WHERE " + column + " = ANY(" + keys + ")";
        }
        StringBuilder arrays = new StringBuilder();
        StringBuilder names = new StringBuilder();
        StringBuilder where = new StringBuilder();
        for (int c = 0; c < n; c++) {
            String slice = "(($1)[" + (c * m + 1) + ":" + ((c + 1) * m) + "])::"
                    + table.types().get(c) + "[]";
            String column = "t." + ident(table.columns().get(c));
            arrays.append(c == 0 ? "" : ", ").append(slice);
            names.append("v").append(c).append(", ");
            where.append(c == 0 ? "" : " AND ")
                    .append(column)
                    .append(" = ANY(")
                    .append(slice)
                    .append(')');
        }
        for (int c = 0; c < n; c++) {
            where.append(" AND t.")
                    .append(ident(table.columns().get(c)))
                    .append(" = k.v")
                    .append(c);
        }
        return "SELECT ARRAY[k.i::text] FROM unnest(" + arrays + ") WITH ORDINALITY AS k(" + names + "i)"
                + " WHERE EXISTS (SELECT 1 FROM " + qualified(table) + " AS t WHERE " + where + ")";
    }

    /**
     * One key, for {@code aura_rls.visible_each}: {@code SELECT EXISTS (SELECT 1 FROM t WHERE
     * pk1 = $1[1]::type1 AND ...)}, the key's column values as one text array.
     */
    static String single(KeyChecks.KeyedTable table) {
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

    /**
     * Each key on its own ({@code aura_rls.visible_each}), for the runner: {@code $1[1]} is
     * {@link #single}'s text, the rest the keys' column values.
     */
    static String each(int width) {
        return "SELECT ARRAY[e.k::text, e.visible::text, e.err_state] FROM aura_rls.visible_each($1[1], $1[2:], "
                + width + ") e";
    }

    private static String qualified(KeyChecks.KeyedTable table) {
        return ident(table.schema()) + "." + ident(table.table());
    }

    static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }
}
