package dev.aura.realtime.cdc.catalog;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The enabled-table list (docs/design.md C5).
 *
 * <p>The slot readers never use a cached list: a list is valid only up to the WAL flush position
 * read before it (anything enabled before that position is visible to the list query), and a
 * reader must never move the slot past the bound of the list its changes were decoded with, so it
 * reads the list fresh ({@link #read}, one small query on the platform login) after reading the
 * flush position. A failed read fails the reader's round (nothing is advanced).
 *
 * <p>{@link #get()} is the cached view for everything else, re-read at most every
 * {@code CDC_TABLE_REFRESH_MS}; when that refresh query fails the previous list is kept (logged).
 */
public final class EnabledTablesCache implements Supplier<EnabledTables>, EnabledTablesSource {
    private static final Logger log = LoggerFactory.getLogger(EnabledTablesCache.class);
    private final PlatformDb db;
    private final Duration refresh;
    private final Clock clock;
    private volatile EnabledTables current = EnabledTables.empty();
    private volatile long loadedAtMs = Long.MIN_VALUE;

    public EnabledTablesCache(PlatformDb db, Duration refresh, Clock clock) {
        this.db = db;
        this.refresh = refresh;
        this.clock = clock;
    }

    @Override
    public EnabledTables get() {
        long now = clock.millis();
        if (loadedAtMs == Long.MIN_VALUE || now - loadedAtMs >= refresh.toMillis()) {
            reload(now);
        }
        return current;
    }

    /** The list as last read, without refreshing it. */
    public EnabledTables current() {
        return current;
    }

    /**
     * Reads the list now on the platform login and makes it the current one.
     *
     * @throws SQLException when the query fails: the caller must not use an older list instead
     */
    @Override
    public EnabledTables read() throws SQLException {
        try (Connection c = db.connection()) {
            EnabledTables next = EnabledTablesLoader.load(c);
            synchronized (this) {
                if (!next.equals(current)) {
                    announce(c, next);
                }
                current = next;
                loadedAtMs = clock.millis();
            }
            return next;
        }
    }

    /** Forces the next {@link #get()} to re-read the table (after a control API change). */
    public void invalidate() {
        loadedAtMs = Long.MIN_VALUE;
    }

    private synchronized void reload(long now) {
        try (Connection c = db.connection()) {
            EnabledTables next = EnabledTablesLoader.load(c);
            if (!next.equals(current)) {
                announce(c, next);
            }
            current = next;
            loadedAtMs = now;
        } catch (SQLException e) {
            log.warn(
                    "[EnabledTablesRefreshFailed] could not refresh realtime_tables, keeping {} table(s): {}",
                    current.tables().size(),
                    e.getMessage());
            loadedAtMs = now;
        }
    }

    private void announce(Connection c, EnabledTables next) throws SQLException {
        log.info("realtime tables now: {}", next.isEmpty() ? "(none)" : next.addTablesOption());
        for (String table : EnabledTablesLoader.withoutReplicaIdentity(c)) {
            log.warn(
                    "[TableWithoutReplicaIdentity] realtime table {} has neither a primary key nor a replica identity: wal2json drops its UPDATE "
                            + "and DELETE, only INSERT and TRUNCATE reach clients. Add a primary key or run "
                            + "ALTER TABLE {} REPLICA IDENTITY FULL",
                    table,
                    table);
        }
    }
}
