package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.decode.RowChange;
import dev.aura.realtime.cdc.leader.FencedException;
import dev.aura.realtime.cdc.leader.LeaderGate;
import dev.aura.realtime.cdc.match.Matcher;
import dev.aura.realtime.cdc.match.SubscriptionIndex;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.publish.EventPublisher;
import dev.aura.realtime.cdc.rls.AccessPolicy;
import dev.aura.realtime.cdc.slot.CdcReason;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Routes changes to {@code numShards} worker threads by hash of project id (so each project's
 * changes stay in commit order), where each change is built into an event, matched against the
 * subscription registry, checked by the {@link AccessPolicy} and published (PRODUCT.md C7).
 *
 * <p>Threads: one platform thread per shard, {@code aura-shard-N}. Queues are bounded
 * ({@code queueCapacity} changes each): when shards fall behind, {@link #accept} blocks the poll
 * loop, which keeps memory flat for a transaction of any size.
 *
 * <p>Invariant: {@link #flush} returns normally only when every change accepted since the previous
 * flush was either published (and confirmed by a NATS flush) or deliberately dropped because no
 * subscriber may see it. Any failure (NATS, fencing, a bug) is reported by the next flush, and
 * the caller must not advance the slot: the batch is re-read and re-published (at least once).
 */
public final class ShardedPipeline implements ChangeSink, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ShardedPipeline.class);
    private static final int DRAIN = 256;

    private final EventBuilder builder;
    private final SubscriptionIndex index;
    private final Matcher matcher = new Matcher();
    private final AccessPolicy policy;
    private final EventPublisher publisher;
    private final CdcMetrics metrics;
    private final Duration flushTimeout;
    private final ObjectMapper mapper = WireJson.mapper();
    private final List<Shard> shards = new ArrayList<>();
    private volatile LeaderGate gate;

    private record Work(RowChange change, String projectId) {}

    private record Flush(CompletableFuture<Void> done) {}

    public ShardedPipeline(
            int numShards,
            int queueCapacity,
            EventBuilder builder,
            SubscriptionIndex index,
            AccessPolicy policy,
            EventPublisher publisher,
            CdcMetrics metrics,
            Duration flushTimeout) {
        this.builder = builder;
        this.index = index;
        this.policy = policy;
        this.publisher = publisher;
        this.metrics = metrics;
        this.flushTimeout = flushTimeout;
        for (int i = 0; i < numShards; i++) {
            shards.add(new Shard(i, queueCapacity));
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
        shards.get(Math.floorMod(projectId.hashCode(), shards.size())).queue.put(new Work(change, projectId));
    }

    @Override
    public void flush() throws InterruptedException, PipelineException {
        List<CompletableFuture<Void>> pending = new ArrayList<>(shards.size());
        for (Shard s : shards) {
            CompletableFuture<Void> f = new CompletableFuture<>();
            s.queue.put(new Flush(f));
            pending.add(f);
        }
        PipelineException failure = null;
        for (CompletableFuture<Void> f : pending) {
            try {
                f.get();
            } catch (ExecutionException e) {
                Throwable cause = e.getCause();
                if (failure == null) {
                    failure = cause instanceof PipelineException pe
                            ? pe
                            : new PipelineException(CdcReason.ERROR, "shard failed: " + cause, cause);
                }
            }
        }
        if (failure != null) {
            metrics.publishFailures.increment();
            throw failure;
        }
        try {
            publisher.flush(flushTimeout);
        } catch (TimeoutException e) {
            metrics.publishFailures.increment();
            throw new PipelineException(
                    CdcReason.NATS_UNAVAILABLE,
                    "NATS did not confirm the batch within " + flushTimeout.toMillis() + " ms",
                    e);
        } catch (IllegalStateException e) {
            metrics.publishFailures.increment();
            throw new PipelineException(CdcReason.NATS_UNAVAILABLE, "NATS connection closed: " + e.getMessage(), e);
        }
    }

    private final class Shard implements Runnable {
        final int id;
        final BlockingQueue<Object> queue;
        Thread thread;
        PipelineException failure;

        Shard(int id, int capacity) {
            this.id = id;
            this.queue = new ArrayBlockingQueue<>(capacity);
        }

        void start() {
            thread = Thread.ofPlatform().name("aura-shard-" + id).daemon().start(this);
        }

        @Override
        public void run() {
            List<Object> items = new ArrayList<>(DRAIN);
            List<Work> run = new ArrayList<>(DRAIN);
            try {
                while (true) {
                    items.add(queue.take());
                    queue.drainTo(items, DRAIN - 1);
                    for (Object item : items) {
                        if (item instanceof Work w) {
                            run.add(w);
                        } else if (item instanceof Flush f) {
                            process(run);
                            run.clear();
                            if (failure != null) {
                                f.done.completeExceptionally(failure);
                                failure = null;
                            } else {
                                f.done.complete(null);
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
        private void process(List<Work> run) throws InterruptedException {
            if (run.isEmpty() || failure != null) {
                return; // after a failure the rest of the batch is re-read from the slot anyway
            }
            if (!index.synchronised()) {
                // matching against a registry that lacks re-put bindings would drop their changes
                // and let the slot advance past them; fail the batch so it is re-read
                failure = new PipelineException(
                        CdcReason.NATS_UNAVAILABLE,
                        "subscription registry re-synchronising after a NATS reconnect (waiting for "
                                + index.awaitedReplicas() + ")",
                        null);
                return;
            }
            try {
                List<AccessPolicy.Candidates> candidates = new ArrayList<>(run.size());
                for (Work w : run) {
                    BuiltEvent e = builder.build(w.change, w.projectId);
                    List<SubscriptionEntry> matched = matcher.match(e, index.candidates(w.projectId, e.table()));
                    candidates.add(new AccessPolicy.Candidates(e, matched));
                }
                List<List<String>> allowed = policy.allowed(candidates);
                LeaderGate g = gate;
                for (int i = 0; i < candidates.size(); i++) {
                    List<String> ids = allowed.get(i);
                    BuiltEvent e = candidates.get(i).event();
                    if (ids.isEmpty()) {
                        metrics.eventsUnmatched.increment();
                        continue;
                    }
                    if (g != null) {
                        g.checkFence();
                    }
                    ChangeEvent event = new ChangeEvent(e.eventId(), e.projectId(), e.table(), e.type(), ids, e.data());
                    publisher.publish(
                            Subjects.changes(e.projectId(), e.table()),
                            e.eventId(),
                            g == null ? 0 : g.leaseEpoch(),
                            mapper.writeValueAsBytes(event));
                    metrics.eventsPublished.increment();
                }
            } catch (InterruptedException e) {
                throw e;
            } catch (dev.aura.realtime.cdc.rls.RlsUnavailableException e) {
                // Postgres unreachable during the RLS check: re-read the batch rather than drop its changes
                failure = new PipelineException(CdcReason.POSTGRES_UNAVAILABLE, e.getMessage(), e);
            } catch (FencedException e) {
                failure = new PipelineException(CdcReason.NOT_LEADER, "fenced: " + e.getMessage(), e);
            } catch (IllegalStateException e) {
                failure = new PipelineException(CdcReason.NATS_UNAVAILABLE, "publish failed: " + e.getMessage(), e);
            } catch (Exception e) {
                log.error("shard {} failed to process a batch; it will be re-read from the slot", id, e);
                failure = new PipelineException(CdcReason.ERROR, e.toString(), e);
            }
        }
    }

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
                    s.thread.join(5000);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
