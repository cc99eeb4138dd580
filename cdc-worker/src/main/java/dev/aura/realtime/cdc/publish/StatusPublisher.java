package dev.aura.realtime.cdc.publish;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes {@link CdcStatus} on {@link Subjects#CDC_STATUS} (docs/design.md D6): immediately when
 * {@code cdc_active} or the reason changes (checked every {@code tick}), and as a heartbeat
 * every {@link CdcStatus#HEARTBEAT}. Only the leader's status matters to clients, so standbys publish
 * nothing while another replica leads. Thread: one scheduler, {@code aura-cdc-status}.
 */
public final class StatusPublisher implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StatusPublisher.class);
    private final CdcState state;
    private final EventPublisher publisher;
    private final CdcMetrics metrics;
    private final String instance;
    private final Clock clock;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-cdc-status").daemon().factory());
    private CdcStatus last;
    private long lastSentMs;
    private volatile boolean everLed;
    private volatile Runnable sync = () -> {};

    public StatusPublisher(CdcState state, EventPublisher publisher, CdcMetrics metrics, String instance, Clock clock) {
        this.state = state;
        this.publisher = publisher;
        this.metrics = metrics;
        this.instance = instance;
        this.clock = clock;
    }

    /** Runs {@code beforeTick} at the start of every tick (e.g. to mirror leadership into the state). */
    public void syncWith(Runnable beforeTick) {
        this.sync = beforeTick;
    }

    public void start(Duration tick) {
        scheduler.scheduleWithFixedDelay(this::tick, 0, tick.toMillis(), TimeUnit.MILLISECONDS);
    }

    /**
     * Publishes the state as it is now (e.g. right after a slot was recreated). The snapshot is
     * taken on the caller's thread: by the time the scheduler runs, the poll loop may already be
     * active again, and clients must still see the inactive status carrying the gap.
     */
    public void publishNow() {
        CdcStatus now = current();
        scheduler.execute(() -> send(now));
    }

    private CdcStatus current() {
        CdcState.Snapshot s = state.snapshot();
        // the code and our own words only: every project's clients read this (docs/design.md C13)
        String reason = s.reason() == null
                ? null
                : s.reason().code() + ": " + s.reason().description();
        Long lag = s.slot() == null ? null : s.slot().lagBytes();
        return new CdcStatus(instance, s.active(), reason, s.gapFrom(), s.gapTo(), clock.millis(), lag);
    }

    private void tick() {
        try {
            sync.run();
            CdcState.Snapshot snap = state.snapshot();
            metrics.active(snap.active());
            if (snap.leader()) {
                everLed = true;
            } else if (!everLed || !isLeaderlessProblem(snap)) {
                return; // a standby: the leader speaks for the CDC
            }
            CdcStatus now = current();
            boolean changed = last == null
                    || last.active() != now.active()
                    || !Objects.equals(last.reason(), now.reason())
                    || !Objects.equals(last.gapTo(), now.gapTo());
            if (changed || clock.millis() - lastSentMs >= CdcStatus.HEARTBEAT.toMillis()) {
                send(now);
            }
        } catch (RuntimeException e) {
            log.warn("[StatusPublishFailed] status publication failed: {}", e.toString());
        }
    }

    /** A former leader that lost its lease for a reason other than another holder still reports it. */
    private static boolean isLeaderlessProblem(CdcState.Snapshot snap) {
        return snap.reason() != null && snap.reason() != CdcReason.NOT_LEADER;
    }

    private void send(CdcStatus status) {
        try {
            publisher.publishPlain(Subjects.CDC_STATUS, mapper.writeValueAsBytes(status));
            last = status;
            lastSentMs = clock.millis();
        } catch (JsonProcessingException | CdcFailure e) {
            log.debug("could not publish CDC status: {}", e.toString());
        }
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
    }
}
