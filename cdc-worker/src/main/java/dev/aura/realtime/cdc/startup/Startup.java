package dev.aura.realtime.cdc.startup;

import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.health.CdcState;
import io.nats.client.JetStreamApiException;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's start-up as a list of named steps, run in order on one thread ({@code
 * aura-bootstrap}); each is logged with the time it took. A step that needs Postgres or NATS is
 * retried while they are unreachable ({@link StartRetry}: the reason shows in {@code /health},
 * attempts back off, closing the worker ends the wait at once, docs/design.md C10); a step that
 * may wait on them runs outside the worker's lock, so closing it never waits; every other step runs
 * holding that lock, so closing waits for it and finds all it started. Once the worker is closed no
 * further step runs.
 */
public final class Startup {
    private static final Logger log = LoggerFactory.getLogger(Startup.class);

    /** The work of a step. */
    @FunctionalInterface
    public interface Body {
        void run() throws Exception;
    }

    /** One attempt of a step that needs Postgres or NATS: it fails with these while they are unreachable. */
    @FunctionalInterface
    public interface Attempt {
        void run() throws IOException, JetStreamApiException, SQLException, InterruptedException;
    }

    /** A named step; see the factories. */
    public record Step(String name, Body body, Attempt attempt, CdcReason reason, LogCode code, boolean holdsLock) {}

    /**
     * A step that needs Postgres or NATS, retried while they are unreachable (the reason and the
     * warning's code say which); it runs outside the worker's lock and keeps what it starts itself.
     */
    public static Step retried(String name, CdcReason reason, LogCode code, Attempt attempt) {
        return new Step(name, null, attempt, reason, code, false);
    }

    /** A step that may wait on Postgres or NATS: run once, outside the worker's lock; it keeps what it starts itself. */
    public static Step waiting(String name, Body body) {
        return new Step(name, body, null, null, null, false);
    }

    /** A step run once, holding the worker's lock. */
    public static Step step(String name, Body body) {
        return new Step(name, body, null, null, null, true);
    }

    private final Object lock;
    private final BooleanSupplier closed;
    private final StartRetry retry;

    /**
     * @param lock the worker's lock, which closing it takes
     * @param closed whether the worker was closed
     * @param state where a retried step's reason shows
     */
    public Startup(Object lock, BooleanSupplier closed, CdcState state, Duration firstBackoff, Duration maxBackoff) {
        this.lock = lock;
        this.closed = closed;
        this.retry = new StartRetry(state, firstBackoff, maxBackoff, closed);
    }

    /**
     * Runs the steps in order.
     *
     * @return true when every step ran; false when the worker was closed (or the thread
     *     interrupted) before the last
     * @throws Exception what a step threw (start-up ends there)
     */
    public boolean run(List<Step> steps) throws Exception {
        long begin = System.nanoTime();
        for (Step s : steps) {
            if (closed.getAsBoolean()) {
                return false;
            }
            long started = System.nanoTime();
            if (s.attempt() != null) {
                if (!retry.untilUp(s.name(), s.reason(), s.code(), s.attempt())) {
                    return false;
                }
            } else if (s.holdsLock()) {
                synchronized (lock) {
                    if (closed.getAsBoolean()) {
                        return false;
                    }
                    s.body().run();
                }
            } else {
                s.body().run();
            }
            log.info("start-up step '{}' took {} ms", s.name(), millisSince(started));
        }
        log.info("start-up took {} ms ({} steps)", millisSince(begin), steps.size());
        return true;
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }
}
