package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.event.ChangeSink;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.Faults;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.pipeline.ShardItem.Batch;
import dev.aura.realtime.cdc.pipeline.ShardItem.Flush;
import dev.aura.realtime.cdc.pipeline.ShardItem.NewReading;
import dev.aura.realtime.cdc.publish.ChangePublisher;
import dev.aura.realtime.cdc.registry.SubscriptionRegistry;
import dev.aura.realtime.cdc.rls.AccessPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes changes to {@code numShards} worker threads by hash of project id (so each project's
 * changes stay in commit order), where each change is built into an event, matched against the
 * {@link SubscriptionRegistry}, checked by the {@link AccessPolicy} and handed to the
 * {@link ChangePublisher}, a run at a time, by the shard's {@link BatchPublisher} (docs/design.md
 * C7). Decoding (the reader's thread), building and publishing (the shards) and the NATS socket
 * (jnats' writer) run in a pipeline.
 *
 * <p>Threads: one platform thread per shard, {@code aura-shard-N}. Memory is bounded in bytes,
 * not rows: each shard queues changes up to {@code queueBytes} of {@link RowChange#heapCost()}
 * (one change larger than that is still taken when the shard's queue is empty), and when shards
 * fall behind, {@link #accept} blocks the reader. What a shard published and NATS has not yet
 * confirmed is bounded too: past {@code unconfirmedBytes} the shard waits for a confirmation.
 *
 * <p>Invariant: a {@link Barrier} completes normally only when every change accepted before it
 * was published (and confirmed by the publisher's flush), deliberately dropped because no
 * subscriber may see it, stored in its project's late lane, or stored in its project's quarantine
 * as that change's own fault (docs/design.md C13, C14). An infrastructure failure (NATS, Postgres,
 * fencing, a registry still re-synchronising) is reported by the barrier as a {@link CdcFailure},
 * and the caller must not confirm the slot past it: the changes are read again and re-published
 * (at least once). Nothing one change holds can fail a batch.
 *
 * <p>Read your writes: a client told "subscribed" (its registry write acknowledged) may commit a
 * change at once, and that change must find the binding. Each batch handed to a shard carries a
 * registry position asked for ({@link SubscriptionRegistry#position}, asynchronously) after every
 * change in it was read, so after every one of them was committed; the shard matches the batch
 * only once its registry view has applied that position ({@link SubscriptionRegistry#awaitApplied}),
 * else the batch fails and is read again. One position serves every batch handed off without a
 * change read in between, so the cost is about one JetStream request per hand-off round, and its
 * round trip overlaps the shards' work.
 */
public final class ShardedPipeline implements ChangeSink, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShardedPipeline.class);
    /** Most items a shard takes from its queue at once. */
    private static final int DRAIN = 64;
    /** Changes the reader collects for a shard before it hands them over in one queue operation. */
    private static final int BATCH = 128;

    /**
     * What contains one project's faults (docs/design.md C13, C14).
     *
     * @param keeper the projects' quarantines
     * @param ledger what {@code /health} shows of them
     * @param lateLane the projects' late lanes
     * @param latePolicy the access policy of the late lane (longer timeouts, each change alone)
     */
    public record Containment(
            RowFaults.Keeper keeper, RowFaultLedger ledger, LateLane lateLane, AccessPolicy latePolicy) {}

    /**
     * @param numShards worker threads
     * @param queueBytes heap cost of the changes queued per shard before {@link #accept} blocks
     * @param unconfirmedBytes bytes a shard publishes before it waits for NATS to confirm them
     * @param flushTimeout how long a flush waits for the publisher's confirmation
     */
    public record Settings(int numShards, long queueBytes, long unconfirmedBytes, Duration flushTimeout) {}

    private final Settings settings;
    private final EventBuilder builder;
    private final SubscriptionRegistry registry;
    private final AccessPolicy policy;
    private final ChangePublisher publisher;
    private final CdcMetrics metrics;
    private final RowFaults faults;
    private final LateHolds late;
    private final List<Shard> shards = new ArrayList<>();
    private volatile LeaderGate gate;
    /** The registry position batches are handed off with (reader thread only). */
    private CompletableFuture<Long> registryPosition;
    /** A change was read after {@link #registryPosition} was asked for (reader thread only). */
    private boolean readSincePosition = true;

    /** One flush marker per shard, placed by {@link #mark}. */
    private final class ShardBarrier implements Barrier {
        private final List<Flush> flushes;

        ShardBarrier(List<Flush> flushes) {
            this.flushes = flushes;
        }

        @Override
        public boolean processed() {
            for (Flush f : flushes) {
                if (!f.isDone()) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public void await() throws InterruptedException, CdcFailure {
            CdcFailure failure = null;
            for (Flush f : flushes) {
                CdcFailure shardFailure = f.await();
                if (failure == null) {
                    failure = shardFailure;
                }
            }
            try {
                if (failure != null) {
                    throw failure;
                }
                publisher.flush(settings.flushTimeout());
            } catch (CdcFailure e) {
                metrics.publishFailures.increment();
                throw e;
            }
        }
    }

    public ShardedPipeline(
            Settings settings,
            EventBuilder builder,
            SubscriptionRegistry registry,
            AccessPolicy policy,
            ChangePublisher publisher,
            CdcMetrics metrics,
            Containment containment) {
        this.settings = settings;
        this.builder = builder;
        this.registry = registry;
        this.policy = policy;
        this.publisher = publisher;
        this.metrics = metrics;
        this.faults = new RowFaults(containment.keeper(), registry, containment.ledger(), metrics);
        this.late = containment.lateLane() == null
                ? LateHolds.NONE
                : containment.lateLane().holds();
        if (containment.lateLane() != null) {
            AccessPolicy latePolicy = containment.latePolicy();
            containment
                    .lateLane()
                    .useBatches(lateGate -> new BatchPublisher(
                            builder,
                            registry,
                            latePolicy,
                            publisher,
                            LateHolds.NONE,
                            faults,
                            metrics,
                            lateGate,
                            settings.unconfirmedBytes(),
                            settings.flushTimeout()));
        }
        for (int i = 0; i < settings.numShards(); i++) {
            shards.add(new Shard(i, settings.queueBytes()));
        }
    }

    /** Starts the shard threads. */
    public void start() {
        shards.forEach(Shard::start);
    }

    /** Sets the fencing gate of the current leadership term; consulted before every publish. */
    public void useGate(LeaderGate gate) {
        this.gate = gate;
    }

    /** Single producer (the reader): collects the change into its shard's next batch. */
    @Override
    public void accept(RowChange change, String projectId) throws InterruptedException {
        readSincePosition = true;
        Shard shard = shards.get(Math.floorMod(projectId.hashCode(), shards.size()));
        shard.pending.add(new BatchPublisher.Work(change, projectId));
        shard.pendingCost += change.heapCost();
        if (shard.pending.size() >= BATCH || shard.pendingCost >= settings.queueBytes() / 4) {
            shard.handOff();
        }
    }

    @Override
    public void handOff() throws InterruptedException {
        for (Shard s : shards) {
            s.handOff();
        }
    }

    @Override
    public Barrier mark() throws InterruptedException {
        handOff();
        List<Flush> flushes = new ArrayList<>(shards.size());
        for (Shard s : shards) {
            Flush f = new Flush();
            s.queue.add(f);
            flushes.add(f);
        }
        return new ShardBarrier(flushes);
    }

    /**
     * Reader thread: drops the changes accepted and not handed off, and tells each shard that what
     * it still skips of the previous reading ends here.
     */
    @Override
    public void newReading() {
        for (Shard s : shards) {
            s.pending = new ArrayList<>(BATCH);
            s.pendingCost = 0;
            s.queue.add(new NewReading());
        }
        readSincePosition = true;
    }

    /** A registry position asked for after every change handed off so far was read (reader thread). */
    private CompletableFuture<Long> positionForHandOff() {
        if (readSincePosition || registryPosition == null) {
            registryPosition = registry.position();
            readSincePosition = false;
        }
        return registryPosition;
    }

    private final class Shard implements Runnable {
        final int id;
        /** Unbounded in items: {@link #bytes} bounds it. */
        final BlockingQueue<ShardItem> queue = new LinkedBlockingQueue<>();

        final ByteGate bytes;
        /** The reader's next batch for this shard (reader thread only). */
        List<BatchPublisher.Work> pending = new ArrayList<>(BATCH);

        long pendingCost;
        Thread thread;
        CdcFailure failure;
        /**
         * The failure a flush marker reported, until the next {@link NewReading}: the reading that
         * failed goes on reading meanwhile, and its later batches must not overtake the failed one.
         */
        CdcFailure skipping;

        final BatchPublisher batches;

        Shard(int id, long queueBytes) {
            this.id = id;
            this.bytes = new ByteGate(queueBytes);
            this.batches = new BatchPublisher(
                    builder,
                    registry,
                    policy,
                    publisher,
                    late,
                    faults,
                    metrics,
                    () -> gate,
                    settings.unconfirmedBytes(),
                    settings.flushTimeout());
        }

        /** Reader thread: queues the pending batch, waiting while the shard holds too many bytes. */
        void handOff() throws InterruptedException {
            if (pending.isEmpty()) {
                return;
            }
            bytes.acquire(pendingCost);
            queue.add(new Batch(pending, pendingCost, positionForHandOff()));
            pending = new ArrayList<>(BATCH);
            pendingCost = 0;
        }

        void start() {
            thread = Thread.ofPlatform().name("aura-shard-" + id).daemon().start(this);
        }

        @Override
        public void run() {
            List<ShardItem> items = new ArrayList<>(DRAIN);
            List<BatchPublisher.Work> run = new ArrayList<>(DRAIN);
            CompletableFuture<Long> runPosition = null;
            try {
                while (true) {
                    items.add(queue.take());
                    queue.drainTo(items, DRAIN - 1);
                    for (ShardItem item : items) {
                        switch (item) {
                            case Batch b -> {
                                if (skipping == null) {
                                    run.addAll(b.works());
                                    runPosition = b.registryPosition(); // positions are asked for in order
                                }
                            }
                            case Flush f -> {
                                process(run, runPosition);
                                run.clear();
                                if (failure != null && skipping == null) {
                                    skipping = failure;
                                }
                                f.complete(skipping);
                                failure = null;
                            }
                            case NewReading r -> {
                                run.clear(); // the previous reading's: read again
                                failure = null;
                                skipping = null;
                            }
                        }
                    }
                    process(run, runPosition);
                    run.clear();
                    long done = 0;
                    for (ShardItem item : items) {
                        if (item instanceof Batch b) {
                            done += b.cost();
                        }
                    }
                    bytes.release(done);
                    items.clear();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Builds, matches, checks and publishes a run of changes in order; records the first failure. */
        private void process(List<BatchPublisher.Work> run, CompletableFuture<Long> registryPosition) {
            if (run.isEmpty() || failure != null) {
                return; // after a failure the rest of the batch is re-read from the slot anyway
            }
            try {
                registry.awaitApplied(registryPosition);
                batches.publish(run);
            } catch (CdcFailure e) {
                failure = e;
            } catch (FencedException e) {
                failure = CdcFailure.retriable(CdcReason.NOT_LEADER, "fenced: " + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                failure = CdcFailure.retriable(CdcReason.ERROR, "interrupted", e);
            } catch (RuntimeException e) {
                // a bug outside any one change's processing (each change's own are its faults, C13);
                // the exception's text stays out of the log line and the status: it may quote data
                log.error(
                        "[ShardBatchFailed] shard {} failed to process a batch ({}); it will be re-read from the slot",
                        id,
                        Faults.describe(e));
                failure =
                        CdcFailure.retriable(CdcReason.ERROR, "a shard failed on a batch (see [ShardBatchFailed])", e);
            }
        }
    }

    /** Interrupts the shards and waits for each at most the flush timeout. Idempotent. */
    @Override
    public void close() {
        for (Shard s : shards) {
            if (s.thread != null) {
                s.thread.interrupt();
            }
        }
        for (Shard s : shards) {
            if (s.thread != null) {
                try {
                    s.thread.join(settings.flushTimeout().toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
