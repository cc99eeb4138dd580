package dev.aura.realtime.cdc.catalog;

import java.sql.SQLException;

/** Where the slot readers read the enabled-table list from, fresh each time (docs/design.md C5). */
@FunctionalInterface
public interface EnabledTablesSource {
    /**
     * Reads the list now, on the platform login (the replication role may not read
     * {@code aura_platform}). Call it after reading {@code pg_current_wal_flush_lsn()}: the list is
     * valid up to that position.
     *
     * @throws SQLException when the query fails
     */
    EnabledTables read() throws SQLException;
}
