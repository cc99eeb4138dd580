package dev.aura.realtime.cdc.event;

import java.util.List;

/**
 * A row of an event as published: column names, their {@code typname}s and undecoded values,
 * in order. Immutable.
 *
 * @param names column names
 * @param typnames {@code pg_type.typname} of each column
 * @param values each column's value as wal2json wrote it
 */
public record Tuple(List<String> names, List<String> typnames, List<RawValue> values) {
    public Tuple {
        if (names.size() != typnames.size() || names.size() != values.size()) {
            throw new IllegalArgumentException("names, typnames and values differ in length");
        }
    }

    public int size() {
        return names.size();
    }

    /** The index of a column, or -1. */
    public int indexOf(String name) {
        return names.indexOf(name);
    }
}
