package dev.aura.realtime.cdc.platform;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The enabled-table list, re-read from {@code aura_platform.realtime_tables} at most every
 * {@code CDC_TABLE_REFRESH_MS} (docs/design.md C5). Called by the poll loop before each peek, so a
 * table enabled or disabled takes effect within one refresh. When the refresh query fails the
 * previous list is kept (logged), so a platform-table hiccup does not stop the capture.
 */
public final class EnabledTablesCache implements Supplier<EnabledTables> {
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

    /** Forces the next {@link #get()} to re-read the table (after a control API change). */
    public void invalidate() {
        loadedAtMs = Long.MIN_VALUE;
    }

    private synchronized void reload(long now) {
        try (Connection c = db.connection()) {
            EnabledTables next = EnabledTablesLoader.load(c);
            if (!next.equals(current)) {
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
}
