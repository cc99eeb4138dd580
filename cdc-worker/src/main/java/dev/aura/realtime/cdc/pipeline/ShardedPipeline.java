package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.ChangeSink;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.match.Matcher;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.publish.ChangePublisher;
import dev.aura.realtime.cdc.registry.SubscriptionRegistry;
import dev.aura.realtime.cdc.rls.AccessPolicy;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes changes to {@code numShards} worker threads by hash of project id (so each project's
 * changes stay in commit order), where each change is built into an event, matched against the
 * {@link SubscriptionRegistry}, checked by the {@link AccessPolicy} and handed to the
 * {@link ChangePublisher} (docs/design.md C7).
 *
 * <p>Threads: one platform thread per shard, {@code aura-shard-N}. Queues are bounded
 * ({@code queueCapacity} changes each): when shards fall behind, {@link #accept} blocks the poll
 * loop, which keeps memory flat for a transaction of any size.
 *
 * <p>Invariant: {@link #flush} returns normally only when every change accepted since the previous
 * flush was either published (and confirmed by the publisher's flush) or deliberately dropped
 * because no subscriber may see it. Any failure (NATS, Postgres, fencing, a registry still
 * re-synchronising, a bug) is reported by the next flush as a {@link CdcFailure}, and the caller
 * must not advance the slot: the batch is re-read and re-published (at least once).
 *
 * <p>Read your writes: the first {@link #accept} of a batch waits until the registry view holds
 * every binding acknowledged before it ({@link SubscriptionRegistry#awaitCurrent}). The poll
 * loop read its flush position before the first change, so every change of the batch was
 * committed before that moment, and a client told "subscribed" before committing finds its
 * binding. When the view cannot catch up, the batch's changes are not queued at all and its flush
 * fails. {@link #accept} and {@link #flush} are called by the poll loop's one thread.
 */
public final class ShardedPipeline implements ChangeSink, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShardedPipeline.class);
    /** Most items a shard takes from its queue at once. */
    private static final int DRAIN = 256;

    /**
     * @param numShards worker threads
     * @param queueCapacity changes queued per shard before {@link #accept} blocks
     * @param flushTimeout how long a flush waits for the publisher's confirmation
     */
    public record Settings(int numShards, int queueCapacity, Duration flushTimeout, int maxMessageBytes) {
        /** Settings with the default message payload bound ({@link #DEFAULT_MAX_MESSAGE_BYTES}). */
        public Settings(int numShards, int queueCapacity, Duration flushTimeout) {
            this(numShards, queueCapacity, flushTimeout, DEFAULT_MAX_MESSAGE_BYTES);
        }
    }

    /**
     * Largest payload a captured message is published with (docs/design.md H2): below NATS's
     * default 1 MiB message limit with room for the envelope.
     */
    public static final int DEFAULT_MAX_MESSAGE_BYTES = 900 * 1024;

    private final Settings settings;
    private final EventBuilder builder;
    private final SubscriptionRegistry registry;
    private final Matcher matcher = new Matcher();
    private final AccessPolicy policy;
    private final ChangePublisher publisher;
    private final CdcMetrics metrics;
    private final EventRenderer renderer = new EventRenderer();
    private final MessageRows messageRows;
    private final List<Shard> shards = new ArrayList<>();
    private volatile LeaderGate gate;
    /** A change was accepted since the last flush (poll-loop thread only). */
    private boolean batchOpen;
    /** Why this batch must fail before any shard sees it, or null (poll-loop thread only). */
    private CdcFailure batchFailure;

    /** What a shard's queue holds: changes, and flush markers between them. */
    private sealed interface Item permits Work, Flush {}

    private record Work(RowChange change, String projectId) implements Item {}

    /** Completed by the shard once every change queued before it was processed. */
    private static final class Flush implements Item {
        private final CountDownLatch done = new CountDownLatch(1);
        private volatile CdcFailure failure;

        void complete(CdcFailure outcome) {
            failure = outcome;
            done.countDown();
        }

        /** @return the shard's first failure since the previous flush, or null */
        CdcFailure await() throws InterruptedException {
            done.await();
            return failure;
        }
    }

    public ShardedPipeline(
            Settings settings,
            EventBuilder builder,
            SubscriptionRegistry registry,
            AccessPolicy policy,
            ChangePublisher publisher,
            CdcMetrics metrics) {
        this.settings = settings;
        this.builder = builder;
        this.registry = registry;
        this.policy = policy;
        this.publisher = publisher;
        this.metrics = metrics;
        this.messageRows = new MessageRows(settings.maxMessageBytes());
        for (int i = 0; i < settings.numShards(); i++) {
            shards.add(new Shard(i, settings.queueCapacity()));
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

    @Override
    public void accept(RowChange change, String projectId) throws InterruptedException {
        if (!batchOpen) {
            batchOpen = true;
            try {
                registry.awaitCurrent();
            } catch (CdcFailure e) {
                batchFailure = e;
            }
        }
        if (batchFailure != null) {
            return; // the flush fails, the slot stays, the batch is read again
        }
        shards.get(Math.floorMod(projectId.hashCode(), shards.size())).queue.put(new Work(change, projectId));
    }

    @Override
    public void flush() throws InterruptedException, CdcFailure {
        CdcFailure failure = batchFailure;
        batchFailure = null;
        batchOpen = false;
        List<Flush> pending = new ArrayList<>(shards.size());
        for (Shard s : shards) {
            Flush f = new Flush();
            s.queue.put(f);
            pending.add(f);
        }
        for (Flush f : pending) {
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

    private final class Shard implements Runnable {
        final int id;
        final BlockingQueue<Item> queue;
        Thread thread;
        CdcFailure failure;

        Shard(int id, int capacity) {
            this.id = id;
            this.queue = new ArrayBlockingQueue<>(capacity);
        }

        void start() {
            thread = Thread.ofPlatform().name("aura-shard-" + id).daemon().start(this);
        }

        @Override
        public void run() {
            List<Item> items = new ArrayList<>(DRAIN);
            List<Work> run = new ArrayList<>(DRAIN);
            try {
                while (true) {
                    items.add(queue.take());
                    queue.drainTo(items, DRAIN - 1);
                    for (Item item : items) {
                        switch (item) {
                            case Work w -> run.add(w);
                            case Flush f -> {
                                process(run);
                                run.clear();
                                f.complete(failure);
                                failure = null;
                            }
                        }
                    }
                    process(run);
                    run.clear();
                    items.clear();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        /** Builds, matches, checks and publishes a run of changes in order; records the first failure. */
        private void process(List<Work> run) {
            if (run.isEmpty() || failure != null) {
                return; // after a failure the rest of the batch is re-read from the slot anyway
            }
            try {
                checkAndPublish(run);
            } catch (CdcFailure e) {
                failure = e;
            } catch (FencedException e) {
                failure = CdcFailure.retriable(CdcReason.NOT_LEADER, "fenced: " + e.getMessage(), e);
            } catch (SQLException e) {
                failure = CdcFailure.classify(e);
            } catch (JsonProcessingException | RuntimeException e) {
                log.error(
                        "[ShardBatchFailed] shard {} failed to process a batch; it will be re-read from the slot",
                        id,
                        e);
                failure = CdcFailure.retriable(CdcReason.ERROR, e.toString(), e);
            }
        }

        private void checkAndPublish(List<Work> run)
                throws CdcFailure, FencedException, SQLException, JsonProcessingException {
            if (!registry.synchronised()) {
                // matching against a registry that lacks re-put bindings would drop their changes
                // and let the slot advance past them; fail the batch so it is re-read
                throw CdcFailure.retriable(
                        CdcReason.NATS_UNAVAILABLE,
                        "subscription registry re-synchronising after a NATS reconnect (waiting for "
                                + registry.awaitedReplicas() + ")",
                        null);
            }
            List<AccessPolicy.Candidates> candidates = new ArrayList<>(run.size());
            List<MessageRows.Rendered> messages = new ArrayList<>();
            for (Work w : run) {
                if (MessageRows.isMessageRow(w.change(), w.projectId())) {
                    // Broadcast from Database (docs/design.md H2): published in this run's commit
                    // order; ws-front applies the channel's read check
                    MessageRows.Rendered m = messageRows.render(w.change(), w.projectId());
                    if (m != null) {
                        candidates.add(null);
                        messages.add(m);
                    }
                    continue;
                }
                BuiltEvent e = builder.build(w.change(), w.projectId());
                List<SubscriptionEntry> matched = matcher.match(e, registry.candidates(w.projectId(), e.table()));
                candidates.add(new AccessPolicy.Candidates(e, matched));
            }
            List<AccessPolicy.Candidates> changes = new ArrayList<>(candidates.size());
            for (AccessPolicy.Candidates c : candidates) {
                if (c != null) {
                    changes.add(c);
                }
            }
            List<List<Delivery>> allowed = policy.allowed(changes);
            LeaderGate g = gate;
            int change = 0;
            int message = 0;
            for (AccessPolicy.Candidates candidate : candidates) {
                if (candidate == null) {
                    MessageRows.Rendered m = messages.get(message++);
                    if (g != null) {
                        g.checkFence();
                    }
                    publisher.publish(m.subject(), m.eventId(), g == null ? 0 : g.leaseEpoch(), m.body());
                    metrics.eventsPublished.increment();
                    continue;
                }
                List<Delivery> deliveries = allowed.get(change++);
                BuiltEvent e = candidate.event();
                if (deliveries.isEmpty()) {
                    metrics.eventsUnmatched.increment();
                    continue;
                }
                for (Delivery d : deliveries) {
                    if (g != null) {
                        g.checkFence();
                    }
                    publisher.publish(
                            Subjects.changes(e.projectId(), e.table()),
                            EventRenderer.messageId(e, d),
                            g == null ? 0 : g.leaseEpoch(),
                            renderer.render(e, d));
                    metrics.eventsPublished.increment();
                }
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
