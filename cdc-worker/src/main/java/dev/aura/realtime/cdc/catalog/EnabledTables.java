package dev.aura.realtime.cdc.catalog;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * An immutable snapshot of the tables enabled for realtime, and the wal2json {@code add-tables}
 * option built from it.
 *
 * <p>wal2json parses {@code add-tables} as a comma-separated list of {@code schema.table} where
 * {@code *} is a wildcard and a backslash escapes the next character (wal2json.c,
 * {@code string_to_SelectTable}); names are compared unquoted and case-sensitively. We escape
 * backslash, comma, dot, asterisk and whitespace. An empty list is never passed (without the
 * option wal2json decodes every table): with no enabled table the poller does not peek at all
 * and only advances the slot, so callers check {@link #isEmpty()} first.
 *
 * <p><b>Partitions</b> (docs/design.md C5): wal2json reports a change of a partitioned table under
 * the partition's name. The list therefore holds, besides the enabled tables, every partition of
 * an enabled partitioned table (found when the list is read, so a partition created later is in
 * the next list): they are in {@code add-tables}, and {@link #deliveredName} maps each to the
 * enabled table highest in its tree. A partition enabled on its own, whose root is not enabled,
 * is an ordinary table delivered under its own name.
 */
public final class EnabledTables {
    private final List<EnabledTable> tables;
    private final Map<String, String> projectBySchema;
    private final Set<String> keys;
    private final String addTables;
    /** {@code key(schema, partition)} to the enabled ancestor it is delivered under. */
    private final Map<String, String> partitionRoots;

    public EnabledTables(List<EnabledTable> tables) {
        this(tables, Map.of());
    }

    /**
     * @param partitionRoots {@link #key}{@code (schema, partition)} to the enabled table (same
     *     schema) the partition's changes are delivered under
     */
    public EnabledTables(List<EnabledTable> tables, Map<String, String> partitionRoots) {
        this.tables = List.copyOf(tables);
        this.partitionRoots = Map.copyOf(partitionRoots);
        Map<String, String> bySchema = new HashMap<>();
        for (EnabledTable t : tables) {
            bySchema.put(t.schemaName(), t.projectId());
        }
        this.projectBySchema = Map.copyOf(bySchema);
        this.keys =
                tables.stream().map(t -> key(t.schemaName(), t.tableName())).collect(Collectors.toUnmodifiableSet());
        java.util.stream.Stream<String> partitions = partitionRoots.keySet().stream()
                .filter(k -> !keys.contains(k))
                .map(k -> escape(k.substring(0, k.indexOf('\u0000'))) + "."
                        + escape(k.substring(k.indexOf('\u0000') + 1)));
        this.addTables = java.util.stream.Stream.concat(
                        tables.stream().map(t -> escape(t.schemaName()) + "." + escape(t.tableName())), partitions)
                .sorted()
                .collect(Collectors.joining(","));
    }

    public static EnabledTables empty() {
        return new EnabledTables(List.of());
    }

    public boolean isEmpty() {
        return tables.isEmpty();
    }

    public List<EnabledTable> tables() {
        return tables;
    }

    /** The project owning a schema, or null when no enabled table lives in it. */
    public String projectOf(String schemaName) {
        return projectBySchema.get(schemaName);
    }

    public boolean contains(String schemaName, String tableName) {
        return keys.contains(key(schemaName, tableName));
    }

    /**
     * The name a change of {@code schemaName.tableName} is delivered under: its highest enabled
     * ancestor for a partition of an enabled partitioned table, else the table's own name.
     */
    public String deliveredName(String schemaName, String tableName) {
        if (partitionRoots.isEmpty()) {
            return tableName;
        }
        return partitionRoots.getOrDefault(key(schemaName, tableName), tableName);
    }

    static String key(String schemaName, String tableName) {
        return schemaName + "\u0000" + tableName;
    }

    /** The {@code add-tables} option value; never call when {@link #isEmpty()}. */
    public String addTablesOption() {
        if (tables.isEmpty()) {
            throw new IllegalStateException(
                    "no enabled tables: do not peek (wal2json without add-tables decodes every table)");
        }
        return addTables;
    }

    /** Escapes one name for wal2json's {@code add-tables}. */
    private static String escape(String name) {
        StringBuilder sb = new StringBuilder(name.length() + 4);
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '\\' || c == ',' || c == '.' || c == '*' || Character.isWhitespace(c)) {
                sb.append('\\');
            }
            sb.append(c);
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof EnabledTables other
                && other.addTables.equals(addTables)
                && other.tables.equals(tables)
                && other.partitionRoots.equals(partitionRoots);
    }

    @Override
    public int hashCode() {
        return addTables.hashCode();
    }
}
