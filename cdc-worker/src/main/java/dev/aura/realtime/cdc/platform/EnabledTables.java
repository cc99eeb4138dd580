package dev.aura.realtime.cdc.platform;

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
 */
public final class EnabledTables {
    private final List<EnabledTable> tables;
    private final Map<String, String> projectBySchema;
    private final Set<String> keys;
    private final String addTables;

    public EnabledTables(List<EnabledTable> tables) {
        this.tables = List.copyOf(tables);
        Map<String, String> bySchema = new HashMap<>();
        for (EnabledTable t : tables) {
            bySchema.put(t.schemaName(), t.projectId());
        }
        this.projectBySchema = Map.copyOf(bySchema);
        this.keys = tables.stream()
                .map(t -> t.schemaName() + "\u0000" + t.tableName())
                .collect(Collectors.toUnmodifiableSet());
        this.addTables = tables.stream()
                .map(t -> escape(t.schemaName()) + "." + escape(t.tableName()))
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
        return keys.contains(schemaName + "\u0000" + tableName);
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
        return o instanceof EnabledTables other && other.addTables.equals(addTables) && other.tables.equals(tables);
    }

    @Override
    public int hashCode() {
        return addTables.hashCode();
    }
}
