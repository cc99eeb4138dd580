package dev.aura.realtime.cdc.config;

import java.util.Locale;

/** How the worker reads the slot ({@code CDC_SOURCE}; docs/design.md C12). */
public enum CdcSource {
    /** The logical replication protocol ({@code START_REPLICATION}): each WAL record decoded once. */
    STREAM,
    /** The SQL interface ({@code pg_logical_slot_peek_changes}, then {@code pg_replication_slot_advance}). */
    POLL;

    /** The value as written in {@code CDC_SOURCE}. */
    public String configValue() {
        return name().toLowerCase(Locale.ROOT);
    }
}
