package dev.aura.realtime.front.fanout;

import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.SystemMessages;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether changes reach this replica: the cdc-worker's status messages, its silence, and this
 * replica's own NATS link, told to the local postgres_changes subscribers as {@code system}
 * pushes when the answer flips (docs/design.md D6). Joins ask it ({@link #knownInactive}) before
 * they reply.
 *
 * <p><b>Silence.</b> A worker that is killed, partitioned from NATS, or whose NATS link from this
 * replica is cut publishes nothing, so silence longer than {@code WS_CDC_STATUS_TIMEOUT_MS} is
 * reported like an explicit inactive status ({@link #checkSilence}); the next heartbeat reports
 * recovery. {@link #watch} starts one daemon scheduler, {@code aura-cdc-watchdog}, checking four
 * times per timeout.
 *
 * <p><b>The replica's own NATS link.</b> While it is down, changes are published to nobody here,
 * so it counts as an inactive CDC ({@link #relayLinkLost}): postgres_changes subscribers get the
 * same {@code system} error, and {@code ok} only once the link is back, the registry re-put, and
 * a status from an active cdc-worker arrived over the new link ({@link #relayLinkRestored}),
 * which proves that changes reach this replica again.
 */
public final class CdcHealth implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CdcHealth.class);

    /** The oldest status {@link #replicationReady} trusts: two heartbeats. */
    public static final Duration READY_STATUS_AGE = CdcStatus.HEARTBEAT.multipliedBy(2);

    private final LocalTopics topics;
    private final FrontMetrics metrics;
    private final Clock clock;
    private volatile Boolean cdcActive;
    private volatile String cdcReason;
    /** When the last status message arrived (this replica's clock), 0 before the first. */
    private volatile long lastCdcStatusAtMs;

    private volatile String lastGapTo;
    /** The slot's lag in the last status, null when unknown. */
    private volatile Long slotLagBytes;
    /** The NATS link is down (or back, but not yet re-registered): statuses are stale, CDC counts as inactive. */
    private volatile boolean linkDown;

    private ScheduledExecutorService watchdog;

    /**
     * The last LSN of the latest range of changes a recreated slot lost (from the cdc-worker's
     * status), or null when this replica heard of none: a resume whose last delivered change is
     * at or before it cannot be complete (docs/design.md R, {@code slot_lost}).
     */
    public String lastGapTo() {
        return lastGapTo;
    }

    public CdcHealth(LocalTopics topics, FrontMetrics metrics, Clock clock) {
        this.topics = topics;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Starts checking for silence longer than {@code timeout}, four times per timeout. Once. */
    public synchronized void watch(Duration timeout) {
        if (watchdog != null) {
            throw new IllegalStateException("already watching");
        }
        watchdog = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("aura-cdc-watchdog").daemon().factory());
        long periodMs = Math.max(50, timeout.toMillis() / 4);
        watchdog.scheduleWithFixedDelay(
                () -> checkSilence(timeout.toMillis()), periodMs, periodMs, TimeUnit.MILLISECONDS);
    }

    /** Stops the watchdog. Idempotent. */
    @Override
    public synchronized void close() {
        if (watchdog != null) {
            watchdog.shutdownNow();
        }
    }

    /** A cdc-worker status message (the relay's dispatcher thread). */
    public void onStatus(CdcStatus status) {
        if (linkDown) {
            return; // read before the link dropped, or before re-registration: it says nothing about now
        }
        lastCdcStatusAtMs = clock.millis();
        slotLagBytes = status.slotLagBytes();
        apply(status.active(), status.reason(), status.gapTo());
    }

    /**
     * This replica's NATS link dropped: tells postgres_changes subscribers as an inactive CDC
     * would (unless they already were told). Called on jnats' connection-listener thread.
     */
    public void relayLinkLost() {
        linkDown = true;
        metrics.relayLinkLost();
        LogCode.RelayLinkLost.warn(
                log,
                "NATS link lost; telling {} postgres_changes channels",
                topics.withPostgresBindings().size());
        apply(false, Reasons.RELAY_LINK_LOST, null);
    }

    /**
     * The link is back and this replica's registry entries are re-put: the next status of an
     * active cdc-worker sends {@code ok} (at once when no cdc-worker was ever heard from, so
     * there is no status to wait for).
     */
    public void relayLinkRestored() {
        linkDown = false;
        if (lastCdcStatusAtMs == 0) {
            apply(true, null, null);
        }
    }

    /**
     * Declares CDC inactive when a cdc-worker was heard from once but has been silent for longer
     * than {@code timeoutMs} (the leader publishes a status every {@link CdcStatus#HEARTBEAT}; a
     * killed worker publishes no inactive status of its own). Called periodically once
     * {@link #watch} started.
     */
    public void checkSilence(long timeoutMs) {
        if (linkDown) {
            return; // already reported as the link's loss
        }
        long last = lastCdcStatusAtMs;
        long silentMs = clock.millis() - last;
        if (last == 0 || silentMs <= timeoutMs || Boolean.FALSE.equals(cdcActive)) {
            return;
        }
        apply(false, Reasons.cdcSilent(silentMs / 1000), null);
    }

    private synchronized void apply(boolean active, String reason, String gapTo) {
        Boolean previous = cdcActive;
        cdcReason = reason;
        cdcActive = active;
        boolean flippedDown = !active && !Boolean.FALSE.equals(previous);
        boolean recovered = active && Boolean.FALSE.equals(previous);
        // a lost slot is a gap clients must hear about even when CDC was already inactive (e.g.
        // "starting" after the worker restarted): an inactive status with a new gap is pushed too
        boolean newGap = !active && gapTo != null && !gapTo.equals(lastGapTo);
        if (gapTo != null) {
            lastGapTo = gapTo;
        }
        if (!flippedDown && !recovered && !newGap) {
            return;
        }
        log.info("CDC status changed to {} ({})", active ? "active" : "inactive", reason);
        for (Subscriber s : topics.withPostgresBindings()) {
            s.push(
                    "system",
                    recovered
                            ? SystemMessages.ok(SystemMessages.EXT_POSTGRES, Reasons.SUBSCRIBED, s.channelName())
                            : SystemMessages.error(SystemMessages.EXT_POSTGRES, inactiveMessage(), s.channelName()));
        }
    }

    /**
     * Whether changes flow to this replica now, as {@code config.broadcast.replication_ready}
     * means it (docs/protocol.md): this replica's NATS link is up and the last status, from the
     * leading cdc-worker, said active (it leads, its slot is not lost, and a read round of the slot
     * succeeded within about 10 s) and arrived within {@link #READY_STATUS_AGE} (two heartbeats), so
     * a worker killed since is not taken for ready. Unknown (no status yet) is not ready.
     */
    public boolean replicationReady() {
        long last = lastCdcStatusAtMs;
        return !linkDown
                && Boolean.TRUE.equals(cdcActive)
                && last != 0
                && clock.millis() - last <= READY_STATUS_AGE.toMillis();
    }

    /** Why {@link #replicationReady} is false (for the client's {@code system} error). */
    public String notReadyReason() {
        long last = lastCdcStatusAtMs;
        if (linkDown) {
            return Reasons.RELAY_LINK_LOST;
        }
        if (last == 0) {
            return "no status from a cdc-worker yet";
        }
        if (Boolean.FALSE.equals(cdcActive)) {
            return inactiveMessage();
        }
        return "no status from the cdc-worker for " + (clock.millis() - last) / 1000 + " seconds";
    }

    /**
     * The CDC as this replica knows it, for the inspector (docs/design.md D9).
     *
     * @param active the last status's {@code cdc_active} (false while this replica's NATS link is
     *     down or the worker is silent), null before any status
     * @param reason why not active, null when active
     * @param statusAgeMs how long ago the last status arrived, -1 before any
     * @param slotLagBytes the slot's lag in the last status, null when unknown
     * @param replicationReady {@link #replicationReady}
     */
    public record View(Boolean active, String reason, long statusAgeMs, Long slotLagBytes, boolean replicationReady) {}

    /** {@link View} now. */
    public View view() {
        long last = lastCdcStatusAtMs;
        Boolean active = cdcActive;
        return new View(
                active,
                Boolean.FALSE.equals(active) ? inactiveMessage() : null,
                last == 0 ? -1 : clock.millis() - last,
                slotLagBytes,
                replicationReady());
    }

    /** True only when the last status said the cdc-worker is not active (unknown counts as active). */
    public boolean knownInactive() {
        return Boolean.FALSE.equals(cdcActive);
    }

    /** The message sent to postgres_changes subscribers while CDC is inactive. */
    public String inactiveMessage() {
        String reason = cdcReason;
        return reason == null || reason.isBlank() ? "CDC unavailable" : reason;
    }
}
