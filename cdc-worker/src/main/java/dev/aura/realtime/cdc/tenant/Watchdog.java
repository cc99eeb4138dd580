package dev.aura.realtime.cdc.tenant;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends tenant statements that outlive their {@code statement_timeout}. The timeout raises
 * {@code query_canceled} inside the statement, and tenant code may catch it
 * ({@code exception when query_canceled then perform pg_sleep(30)}) and carry on: only
 * {@code pg_terminate_backend}, which tenant code cannot catch, ends it for sure. The watchdog
 * runs that from its own connection of the tenant login (a login may signal its own backends), so
 * it needs no privilege and a full pool cannot block it.
 *
 * <p>A {@link Guard} fires at most once and only while its owner still runs the statement: the
 * owner's {@link Guard#close} and the firing race on one state, so a backend that already went
 * back to the pool (and may serve another project) is never terminated.
 */
final class Watchdog {
    private static final Logger log = LoggerFactory.getLogger(Watchdog.class);
    private static final int ACTIVE = 0;
    private static final int CLOSED = 1;
    private static final int FIRED = 2;

    private final ScheduledExecutorService scheduler;
    private final DataSource terminator;
    private final Duration grace;

    /**
     * @param grace how long after its {@code statement_timeout} a statement is terminated, so a
     *     statement that honours the timeout is never terminated
     */
    Watchdog(ScheduledExecutorService scheduler, DataSource terminator, Duration grace) {
        this.scheduler = scheduler;
        this.terminator = terminator;
        this.grace = grace;
    }

    /** One watched statement (or a few, run back to back on one backend). */
    final class Guard implements AutoCloseable {
        private final AtomicInteger state = new AtomicInteger(ACTIVE);
        private final ScheduledFuture<?> timer;
        private final int pid;

        private Guard(int pid, Duration deadline) {
            this.pid = pid;
            this.timer = scheduler.schedule(this::fire, deadline.toMillis(), TimeUnit.MILLISECONDS);
        }

        private void fire() {
            if (state.compareAndSet(ACTIVE, FIRED)) {
                Thread.startVirtualThread(() -> terminate(pid));
            }
        }

        /** Whether the watchdog terminated (or is terminating) the backend: the statement overran. */
        boolean fired() {
            return state.get() == FIRED;
        }

        /** Stops watching; after it, the backend is never terminated by this guard unless it already {@link #fired}. */
        @Override
        public void close() {
            if (state.compareAndSet(ACTIVE, CLOSED)) {
                timer.cancel(false);
            }
        }
    }

    /** Watches a backend whose statements run with {@code statementTimeout}. */
    Guard watch(int backendPid, Duration statementTimeout) {
        return new Guard(backendPid, statementTimeout.plus(grace));
    }

    private void terminate(int pid) {
        try (Connection c = terminator.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
            ps.setInt(1, pid);
            ps.execute();
        } catch (SQLException e) {
            // the owner's statement then ends by the pool's socket timeout
            log.warn(
                    "[TenantStatementNotTerminated] backend {} overran its deadline and could not be terminated: {}",
                    pid,
                    e.getMessage());
        }
    }
}
