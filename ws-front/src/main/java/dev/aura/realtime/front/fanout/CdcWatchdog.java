package dev.aura.realtime.front.fanout;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Turns a silent cdc-worker into an inactive CDC status (docs/design.md D6): a worker that is
 * killed, partitioned from NATS, or whose NATS link from this replica is cut publishes nothing,
 * so silence longer than {@code WS_CDC_STATUS_TIMEOUT_MS} is reported to postgres_changes
 * subscribers like an explicit inactive status. The next heartbeat reports recovery. Thread:
 * one daemon scheduler, {@code aura-cdc-watchdog}, checking four times per timeout.
 */
public final class CdcWatchdog implements AutoCloseable {
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-cdc-watchdog").daemon().factory());
    private final AtomicBoolean closed = new AtomicBoolean();

    public CdcWatchdog(Fanout fanout, Duration timeout) {
        long periodMs = Math.max(50, timeout.toMillis() / 4);
        scheduler.scheduleWithFixedDelay(
                () -> fanout.checkCdcSilence(timeout.toMillis()), periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            scheduler.shutdownNow();
        }
    }
}
