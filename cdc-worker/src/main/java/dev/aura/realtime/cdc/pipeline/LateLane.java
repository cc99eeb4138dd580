package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.decode.MalformedWalRowException;
import dev.aura.realtime.cdc.decode.Wal2JsonDecoder;
import dev.aura.realtime.cdc.event.HeldChange;
import dev.aura.realtime.cdc.event.Quarantined;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.failure.RowFault;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.publish.ChangePublisher;
import dev.aura.realtime.cdc.publish.ProjectStreams;
import dev.aura.realtime.common.lsn.Lsn;
import io.nats.client.api.PublishAck;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slow is late, not lost (docs/design.md C14). A project whose RLS check outlived the shared
 * lane's statement timeout leaves the shards: that change and every later change of the project
 * go, in commit order, to the project's late lane, a JetStream stream bounded in bytes ({@link
 * ProjectStreams.Kind#LATE}); the slot advances once the stream stored them. One thread
 * ({@code aura-late-lane}, on the leader) takes each late project in turn, a batch at a time,
 * and runs it through the same build, match, check and publish as the shards, with the late
 * lane's longer check timeout and each change checked alone after a timeout; what it delivered
 * is removed from the stream. When a project's lane is empty (everything held was stored and
 * delivered), the project returns to the shards.
 *
 * <p>Only when a project's lane is full ({@code CDC_LATE_LANE_BYTES}) is a change given up: its
 * subscribers get {@code Error 503}, the quarantine keeps it ({@link RowFault#CHECK_BACKLOG_FULL}).
 * A new leader finds the lanes that hold changes and carries on; a quarantined change an operator
 * re-publishes is written into the lane and found by the lane's sweep.
 *
 * <p>Thread-safety: the shards call {@link Holds} concurrently (each project is always on the same
 * shard, so its holds are in order); a project's state is guarded by its own monitor, so the lane
 * returns a project to the shards only when no hold of it is on its way.
 */
public final class LateLane implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LateLane.class);
    /** Least time a project stays late once it became late. */
    static final long STAY_LATE_MS = 30_000;
    /** How long the lane thread waits for work when it has none (a store wakes it earlier). */
    private static final long IDLE_WAIT_MS = 50;

    /** Wakes the lane thread (a change was stored in a lane). */
    private final Object work = new Object();

    private void wake() {
        synchronized (work) {
            work.notifyAll();
        }
    }

    /** What holding one change costs beyond its row: headers and stream overhead. */
    private static final long HOLD_OVERHEAD = 256;

    /**
     * @param bytesPerProject bound of one project's lane (the row bytes it holds)
     * @param batchChanges most changes taken from one project in one turn
     * @param flushTimeout how long a turn waits for NATS to confirm what it published
     * @param sweepEvery how often lanes are looked for in JetStream (a new leader, a re-publish)
     * @param deleteIdleAfter an empty lane's stream is deleted after its project was back this long
     */
    public record Settings(
            long bytesPerProject,
            int batchChanges,
            Duration flushTimeout,
            Duration sweepEvery,
            Duration deleteIdleAfter) {}

    private final ProjectStreams streams;
    private final ChangePublisher publisher;
    private final RowFaults.Keeper keeper;
    private final CdcMetrics metrics;
    private final RowFaultLedger ledger;
    private final Settings settings;
    private final Clock clock;
    private final ConcurrentHashMap<String, LaneState> lanes = new ConcurrentHashMap<>();
    private final LateHolds holds = new SharedLaneHolds();
    /** The lane's batch step (late-lane policy, no further lane), used by the lane's thread only. */
    private volatile BatchPublisher batches;

    private volatile LeaderGate gate;
    private volatile boolean leading;
    private volatile boolean closed;
    private Thread thread;
    private volatile long lastSweepMs;

    public LateLane(
            ProjectStreams streams,
            ChangePublisher publisher,
            RowFaults.Keeper keeper,
            CdcMetrics metrics,
            RowFaultLedger ledger,
            Settings settings,
            Clock clock) {
        this.streams = streams;
        this.publisher = publisher;
        this.keeper = keeper;
        this.metrics = metrics;
        this.ledger = ledger;
        this.settings = settings;
        this.clock = clock;
    }

    /** The lane's own batch step (late-lane policy, no further lane), made by the pipeline; fenced by the lane's gate. */
    void useBatches(Function<java.util.function.Supplier<LeaderGate>, BatchPublisher> factory) {
        this.batches = factory.apply(() -> gate);
    }

    LateHolds holds() {
        return holds;
    }

    /** Starts the lane's thread; it works only while {@link #lead} is in force. */
    public synchronized void start() {
        thread = Thread.ofPlatform().name("aura-late-lane").daemon().start(this::run);
    }

    /**
     * This process leads with {@code g}: finds the lanes that hold changes (a previous leader's),
     * before any change is read, so a project with held changes stays late and in order; then works
     * them. Retries while NATS does not answer.
     */
    public void lead(LeaderGate g) throws InterruptedException {
        lanes.clear();
        while (true) {
            try {
                discover();
                break;
            } catch (CdcFailure | RuntimeException e) {
                log.warn("[{}] finding the late lanes: {}; retrying", LogCode.LATE_LANE_FAILED, e.getMessage());
                Thread.sleep(1000);
            }
        }
        gate = g;
        lastSweepMs = clock.millis();
        leading = true;
    }

    /** Leadership ended: the lane stops; the next leader carries on from the streams. */
    public void stopLeading() {
        leading = false;
        gate = null;
        lanes.clear();
    }

    private final class SharedLaneHolds implements LateHolds {
        @Override
        public boolean isLate(String projectId) {
            LaneState lane = lanes.get(projectId);
            return lane != null && lane.late;
        }

        @Override
        public void markLate(String projectId) {
            LaneState lane = lanes.computeIfAbsent(projectId, LaneState::new);
            synchronized (lane) {
                if (!lane.late) {
                    log.info("project {}: its checks are slow; its changes go through its late lane", projectId);
                    lane.lateSinceMs = clock.millis();
                }
                lane.late = true;
            }
        }

        @Override
        public boolean hold(RowChange change, String projectId) throws CdcFailure {
            LaneState lane = lanes.computeIfAbsent(projectId, LaneState::new);
            long size = change.rowBytes() + HOLD_OVERHEAD;
            synchronized (lane) {
                if (!lane.late) {
                    lane.lateSinceMs = clock.millis();
                }
                lane.late = true;
                if (lane.bytes + size > settings.bytesPerProject()) {
                    return false;
                }
                lane.bytes += size;
                lane.unacked++;
            }
            CompletableFuture<PublishAck> ack;
            try {
                ack = streams.store(ProjectStreams.Kind.LATE, HeldChange.of(change, projectId), null);
            } catch (CdcFailure | RuntimeException e) {
                synchronized (lane) {
                    lane.unacked--;
                    lane.bytes -= size;
                }
                throw e;
            }
            ack.whenComplete((a, err) -> {
                synchronized (lane) {
                    lane.unacked--;
                    if (err != null || a.isDuplicate()) {
                        lane.bytes -= size; // not stored, or stored before: counted once
                    }
                    if (a != null) {
                        lane.lastHeldSeq = Math.max(lane.lastHeldSeq, a.getSeqno());
                    }
                }
                wake(); // stored: the lane thread need not wait for its next poll
            });
            return true;
        }
    }

    private void run() {
        while (!closed) {
            try {
                if (!leading || batches == null) {
                    Thread.sleep(200);
                    continue;
                }
                long now = clock.millis();
                if (now - lastSweepMs >= settings.sweepEvery().toMillis()) {
                    discover();
                    deleteIdle(now);
                    lastSweepMs = now;
                }
                boolean worked = false;
                for (LaneState lane : new ArrayList<>(lanes.values())) {
                    if (lane.late && leading) {
                        worked |= turn(lane);
                    }
                }
                report();
                if (!worked) {
                    synchronized (work) {
                        work.wait(IDLE_WAIT_MS);
                    }
                }
            } catch (InterruptedException e) {
                return;
            } catch (CdcFailure | FencedException | RuntimeException e) {
                log.warn("[{}] {}; retrying in a second (nothing is lost)", LogCode.LATE_LANE_FAILED, e.getMessage());
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException stop) {
                    return;
                }
            }
        }
    }

    /** One batch of one project: read, deliver, confirm, remove. @return whether there was work */
    private boolean turn(LaneState lane) throws CdcFailure, FencedException, InterruptedException {
        long from;
        synchronized (lane) {
            from = lane.processedSeq + 1;
        }
        List<ProjectStreams.Stored> batch =
                streams.read(ProjectStreams.Kind.LATE, lane.projectId, from, settings.batchChanges());
        if (batch.isEmpty()) {
            maybeBack(lane);
            return false;
        }
        List<BatchPublisher.Work> works = new ArrayList<>(batch.size());
        long bytes = 0;
        for (ProjectStreams.Stored s : batch) {
            bytes += s.bytes() + HOLD_OVERHEAD;
            RowChange change = decode(s.change());
            if (change != null) {
                works.add(new BatchPublisher.Work(change, lane.projectId));
            }
        }
        batches.publish(works);
        publisher.flush(settings.flushTimeout());
        long last = batch.get(batch.size() - 1).lastSeq();
        streams.purgeBelow(ProjectStreams.Kind.LATE, lane.projectId, last + 1);
        synchronized (lane) {
            lane.processedSeq = Math.max(lane.processedSeq, last);
            lane.bytes = Math.max(0, lane.bytes - bytes);
        }
        return true;
    }

    /** The change as the shards would have read it; a row that no longer decodes is quarantined. */
    private RowChange decode(HeldChange h) throws CdcFailure {
        try {
            int colon = h.eventId().lastIndexOf(':');
            Lsn commit = Lsn.parse(h.eventId().substring(0, colon));
            long ordinal = Long.parseLong(h.eventId().substring(colon + 1));
            RowChange c = new Wal2JsonDecoder().decodeChange(h.raw(), commit, ordinal, h.commitTimestamp(), h.xid());
            return c.table().equals(h.table()) || h.table().isEmpty() ? c : c.withTable(h.table());
        } catch (MalformedWalRowException | RuntimeException e) {
            keeper.keep(h, new Quarantined(RowFault.UNPROCESSABLE, "late", "a held change could not be read again"));
            return null;
        }
    }

    /**
     * The project returns to the shards once everything it held was stored and delivered, and it
     * has been late for {@link #STAY_LATE_MS} at least: a project whose checks stay slow would
     * otherwise come back with each empty lane and cost its shard its budget again each time
     * (bench figure 2b: back and late again five times in a minute).
     */
    private void maybeBack(LaneState lane) {
        synchronized (lane) {
            if (lane.late
                    && lane.unacked == 0
                    && lane.processedSeq >= lane.lastHeldSeq
                    && clock.millis() - lane.lateSinceMs >= STAY_LATE_MS) {
                lane.late = false;
                lane.bytes = 0;
                lane.backSinceMs = clock.millis();
                log.info("project {}: its late lane is empty; back in the shared lane", lane.projectId);
            }
        }
    }

    /** Finds the lanes that hold changes: left by a previous leader, or re-published from the quarantine. */
    private void discover() throws CdcFailure {
        for (String name : streams.streams(ProjectStreams.Kind.LATE)) {
            String projectId = streams.projectOf(ProjectStreams.Kind.LATE, name);
            ProjectStreams.State s = projectId == null ? null : streams.state(ProjectStreams.Kind.LATE, projectId);
            if (s == null || s.messages() == 0) {
                continue;
            }
            LaneState lane = lanes.computeIfAbsent(projectId, LaneState::new);
            synchronized (lane) {
                if (s.lastSeq() <= lane.processedSeq) {
                    continue;
                }
                if (!lane.late) {
                    lane.lateSinceMs = clock.millis();
                    lane.processedSeq = Math.max(lane.processedSeq, s.firstSeq() - 1);
                    lane.bytes = s.bytes();
                    log.info("project {}: {} changes wait in its late lane", projectId, s.messages());
                }
                lane.late = true;
                lane.lastHeldSeq = Math.max(lane.lastHeldSeq, s.lastSeq());
            }
        }
    }

    /** Deletes the streams of lanes that have been empty for {@code deleteIdleAfter}. */
    private void deleteIdle(long now) throws CdcFailure {
        for (LaneState lane : new ArrayList<>(lanes.values())) {
            synchronized (lane) {
                boolean idle = !lane.late
                        && lane.unacked == 0
                        && now - lane.backSinceMs >= settings.deleteIdleAfter().toMillis();
                if (!idle) {
                    continue;
                }
                lanes.remove(lane.projectId, lane);
            }
            streams.deleteStream(ProjectStreams.Kind.LATE, lane.projectId);
        }
    }

    private void report() {
        Map<String, Long> bytes = new HashMap<>();
        long total = 0;
        for (LaneState lane : lanes.values()) {
            if (lane.late) {
                long b;
                synchronized (lane) {
                    b = lane.bytes;
                }
                bytes.put(lane.projectId, b);
                total += b;
            }
        }
        ledger.late(bytes);
        metrics.late(bytes.size(), total);
    }

    @Override
    public synchronized void close() {
        closed = true;
        if (thread != null) {
            thread.interrupt();
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
