package dev.aura.realtime.cdc.startup;

import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.health.CdcState;
import io.nats.client.JetStreamApiException;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Retries a start-up step while Postgres or NATS is unreachable: the reason shows in {@code
 * /health}, attempts back off exponentially, and closing the worker (or interrupting the bootstrap
 * thread) ends the wait at once (docs/design.md C10).
 */
final class StartRetry {
    private static final Logger log = LoggerFactory.getLogger(Startup.class);

    private final CdcState state;
    private final Duration firstBackoff;
    private final Duration maxBackoff;
    private final BooleanSupplier closed;

    StartRetry(CdcState state, Duration firstBackoff, Duration maxBackoff, BooleanSupplier closed) {
        this.state = state;
        this.firstBackoff = firstBackoff;
        this.maxBackoff = maxBackoff;
        this.closed = closed;
    }

    /**
     * Runs {@code step} until it succeeds.
     *
     * @return false when the worker was closed or the thread interrupted meanwhile
     */
    boolean untilUp(String what, CdcReason reason, LogCode code, Startup.Attempt step) {
        long backoff = firstBackoff.toMillis();
        while (!closed.getAsBoolean()) {
            try {
                step.run();
                return true;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } catch (IOException | JetStreamApiException | SQLException e) {
                state.failed(reason, what + ": " + e.getMessage());
                log.warn("[{}] {} failed, retrying in {} ms: {}", code, what, backoff, e.getMessage());
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return false;
                }
                backoff = Math.min(backoff * 2, maxBackoff.toMillis());
            }
        }
        return false;
    }
}
