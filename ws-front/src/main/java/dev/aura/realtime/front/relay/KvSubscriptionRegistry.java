package dev.aura.realtime.front.relay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.Reasons;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SubscriptionRegistry} on the JetStream KV bucket {@link SubscriptionEntry#BUCKET}
 * (memory storage, max age {@code SubscriptionEntry.MAX_AGE}, its own byte limit; created when
 * absent).
 *
 * <p>An entry the cdc-worker would ignore ({@link SubscriptionEntry#problem}, e.g. a role it does
 * not know or claims too large) is not written: its put fails, so the client is told at join
 * instead of subscribing to nothing.
 *
 * <p>Quota: every put charges the entry's stored bytes to its project in a {@link BucketLedger};
 * one that would put the project over its share (across replicas) fails at once with
 * {@link SubscriptionRegistry.QuotaExceeded} and writes nothing (docs/design.md D8). A parked
 * entry (resume, docs/design.md R) stays charged at its stored size until its expiry, when it is
 * deleted if nobody adopted it since (a delete conditional on the park's revision; its marker is
 * charged until the bucket's max age), else forgotten here (issue 38).
 *
 * <p>Max age: the bucket's follows the longest resume window (the cdc-worker sets it); it is read
 * at start and at every refresh ({@link #maxAge()}).
 *
 * <p>Threads: one {@link KvThread} {@code aura-registry} publishes every put and delete, so those
 * of one key keep their order and event loops never block. They are pipelined ({@link KvPipeline}):
 * a join storm's writes are not one round trip each. Every {@code SUBSCRIPTION_REFRESH_MS} it re-puts all live
 * entries, keeping them younger than the bucket's max age; {@link #reputAll()} does the same
 * after a NATS reconnect.
 */
public final class KvSubscriptionRegistry implements SubscriptionRegistry {
    private static final Logger log = LoggerFactory.getLogger(KvSubscriptionRegistry.class);

    private final Connection connection;
    private final KvBuckets.Spec bucket;
    private final KvPipeline writes;
    private final ObjectMapper mapper;
    private final Map<String, SubscriptionEntry> live = new ConcurrentHashMap<>();
    private final BucketLedger ledger;
    private final BucketLedger.Shares shares;
    private final KvThread worker;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** How often parked entries past their expiry are deleted (or forgotten). */
    static final Duration PARKED_SWEEP = Duration.ofSeconds(5);

    /** A parked entry: its project, its expiry, and the revision the park wrote (0 until acknowledged). */
    private static final class Parked {
        final String projectId;
        final long untilMs;
        volatile long revision;

        Parked(String projectId, long untilMs) {
            this.projectId = projectId;
            this.untilMs = untilMs;
        }
    }

    /** Entries this replica parked and has not deleted or forgotten yet (KV thread, and park). */
    private final Map<String, Parked> parked = new ConcurrentHashMap<>();

    private final java.time.Clock clock;
    private volatile Duration maxAge = SubscriptionEntry.MAX_AGE;
    /** Completed by the first full refresh after a reconnect (KV thread only). */
    private CompletableFuture<Void> reput = CompletableFuture.completedFuture(null);

    /**
     * @param bucket the registry bucket ({@link KvBuckets#registry})
     * @param ledger this replica's bytes per project in the bucket, charged on put, released on remove
     * @param shares each project's share of the bucket and the other replicas' bytes of it
     */
    public KvSubscriptionRegistry(
            Connection connection,
            KvBuckets.Spec bucket,
            Duration refresh,
            ObjectMapper mapper,
            BucketLedger ledger,
            BucketLedger.Shares shares,
            java.time.Clock clock) {
        this.connection = connection;
        this.ledger = ledger;
        this.shares = shares;
        this.bucket = bucket;
        this.writes = new KvPipeline(connection, bucket);
        this.mapper = mapper;
        this.clock = clock;
        this.worker = new KvThread("aura-registry", LogCode.RegistryCloseTimeout);
        worker.every(refresh, this::refreshAllNow);
        worker.every(PARKED_SWEEP, this::sweepParked);
    }

    /** Creates the bucket when absent and binds to it, reads its max age (blocking, at start-up). */
    public void start() throws IOException, JetStreamApiException {
        writes.ensureBucket();
        maxAge = KvBuckets.maxAge(connection, bucket);
    }

    /**
     * The bucket's max age as last read (at start and every refresh): the cdc-worker sets it from the
     * longest resume window, and no window may outlast it ({@link SubscriptionEntry#longestWindowWithin}).
     */
    public Duration maxAge() {
        return maxAge;
    }

    @Override
    public CompletableFuture<Void> put(SubscriptionEntry entry) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        byte[] value;
        try {
            value = mapper.writeValueAsBytes(entry);
        } catch (Exception e) {
            done.completeExceptionally(new IllegalArgumentException("registry entry not serialisable: " + e));
            return done;
        }
        String problem = problem(entry, value.length);
        if (problem != null) {
            done.completeExceptionally(new IllegalArgumentException("registry entry refused: " + problem));
            return done;
        }
        String project = entry.projectId();
        long share = shares.share(project);
        if (!ledger.charge(
                project,
                entry.key(),
                ledger.storedBytes(entry.key(), value.length),
                share - shares.elsewhere(project))) {
            done.completeExceptionally(new QuotaExceeded(Reasons.registryQuotaExceeded(share)));
            return done;
        }
        live.put(entry.key(), entry);
        try {
            worker.execute(() -> writeAsync(entry).whenComplete((v, e) -> {
                if (e != null) {
                    done.completeExceptionally(e);
                } else {
                    done.complete(null);
                }
            }));
        } catch (RuntimeException rejected) {
            done.completeExceptionally(rejected);
        }
        return done;
    }

    /** What the cdc-worker would refuse this entry of {@code size} bytes for (its shape, or its size), or null. */
    private static String problem(SubscriptionEntry entry, int size) {
        String problem = entry.problem(entry.key());
        if (problem != null) {
            return problem;
        }
        return size > SubscriptionEntry.MAX_BYTES
                ? size + " bytes, more than " + SubscriptionEntry.MAX_BYTES + " (claims too large)"
                : null;
    }

    /**
     * A join's put or a refresh's, pipelined ({@link KvPipeline}) in the KV thread's order, so one
     * key's puts and deletes reach the stream in order. Completes with the stream's ack.
     */
    private CompletableFuture<Long> writeAsync(SubscriptionEntry entry) {
        SubscriptionEntry current = live.get(entry.key());
        if (current == null) {
            return CompletableFuture.completedFuture(0L); // removed before its turn
        }
        try {
            return writes.put(entry.key(), mapper.writeValueAsBytes(current));
        } catch (IOException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /**
     * A leave's delete, pipelined like {@link #writeAsync} (a storm of leaves cost one round trip
     * each on the KV thread, and the joins' puts waited behind them).
     */
    private CompletableFuture<Long> deleteAsync(String key) {
        if (live.containsKey(key)) {
            return CompletableFuture.completedFuture(0L); // put again before its turn: the put wins
        }
        return writes.delete(key);
    }

    @Override
    public void remove(String key) {
        SubscriptionEntry removed = live.remove(key);
        if (removed == null) {
            return;
        }
        ledger.release(removed.projectId(), key);
        try {
            worker.execute(() -> deleteAsync(key).whenComplete((v, e) -> {
                if (e != null) {
                    LogCode.RegistryDeleteFailed.warn(
                            log, "{}: {} (expires with the bucket's max age)", key, e.toString());
                }
            }));
        } catch (RuntimeException rejected) {
            LogCode.RegistryDeleteFailed.warn(log, "{}: registry closed", key);
        }
    }

    @Override
    public void park(String key, long untilMs) {
        SubscriptionEntry entry = live.remove(key);
        if (entry == null) {
            return;
        }
        SubscriptionEntry parkedEntry = new SubscriptionEntry(
                entry.subId(),
                entry.projectId(),
                entry.table(),
                entry.event(),
                entry.filter(),
                entry.role(),
                entry.claims(),
                Math.min(entry.expiresAtMs(), untilMs),
                entry.instance(),
                entry.select());
        byte[] value;
        try {
            value = mapper.writeValueAsBytes(parkedEntry);
        } catch (Exception e) {
            ledger.release(entry.projectId(), key);
            remove(key);
            return;
        }
        // the bucket keeps the parked entry whole: charged at its size (it replaces the live
        // entry's charge, about as large, so it is never refused) until the sweep after its expiry
        ledger.charge(entry.projectId(), key, ledger.storedBytes(key, value.length), Long.MAX_VALUE);
        Parked p = new Parked(entry.projectId(), untilMs);
        parked.put(key, p);
        try {
            worker.execute(() -> {
                if (live.containsKey(key)) {
                    return; // adopted again before its turn: the live entry wins
                }
                writes.put(key, value).whenComplete((seq, e) -> {
                    if (e != null) {
                        LogCode.RegistryPutFailed.warn(log, "parking {}: {}", key, e.toString());
                    } else {
                        p.revision = seq;
                    }
                });
            });
        } catch (RuntimeException rejected) {
            LogCode.RegistryDeleteFailed.warn(log, "{}: registry closed", key);
        }
    }

    /**
     * The parked entries past their expiry (KV thread): deleted when the bucket still holds this
     * replica's park of them (a delete conditional on that revision; its marker charged until the
     * max age), else forgotten: adopted since (by a rejoin elsewhere, which charges it there), or
     * the park was never acknowledged.
     */
    private void sweepParked() {
        long now = clock.millis();
        for (Map.Entry<String, Parked> e : parked.entrySet()) {
            String key = e.getKey();
            Parked p = e.getValue();
            if (p.untilMs > now || !parked.remove(key, p)) {
                continue;
            }
            if (live.containsKey(key)) {
                continue; // adopted again on this replica: charged as live
            }
            long revision = p.revision;
            if (revision <= 0) {
                ledger.forget(p.projectId, key);
                continue;
            }
            writes.deleteIfLast(key, revision).whenComplete((seq, err) -> {
                if (live.containsKey(key)) {
                    return;
                }
                if (err == null) {
                    ledger.release(p.projectId, key);
                } else {
                    ledger.forget(p.projectId, key); // written since (adopted elsewhere), or gone
                }
            });
        }
    }

    /**
     * Re-puts every live entry soon (after a NATS reconnect), re-creating the bucket first if the
     * server lost it (memory storage does not survive a nats-server restart). Retried every second
     * while it fails (JetStream may answer a moment after the connection is back), for at most
     * {@link #REPUT_ATTEMPTS} attempts; the periodic refresh continues after that. Any thread.
     *
     * @return completes once every live entry was written in one pass (by these attempts or a
     *     later periodic refresh); never fails
     */
    public CompletableFuture<Void> reputAll() {
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            worker.execute(() -> {
                if (reput.isDone()) {
                    reput = new CompletableFuture<>();
                }
                reput.whenComplete((v, e) -> done.complete(null));
                reputAll(REPUT_ATTEMPTS);
            });
        } catch (RuntimeException rejected) {
            log.debug("registry closed; no re-put");
        }
        return done;
    }

    private static final int REPUT_ATTEMPTS = 30;

    private void reputAll(int attemptsLeft) {
        try {
            worker.execute(() -> {
                writes.recheckBucket();
                refreshAll().thenAccept(failed -> {
                    if (failed > 0 && attemptsLeft > 1 && !closed.get()) {
                        worker.schedule(() -> reputAll(attemptsLeft - 1), Duration.ofSeconds(1));
                    } else {
                        log.info("registry: {} entries re-put after reconnect", live.size());
                    }
                });
            });
        } catch (RuntimeException rejected) {
            log.debug("registry closed; no re-put");
        }
    }

    /** The periodic refresh (KV thread); its completion is not awaited. Reads the bucket's max age too. */
    private void refreshAllNow() {
        refreshAll();
        try {
            maxAge = KvBuckets.maxAge(connection, bucket);
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.debug("registry max age not read: {}", e.toString());
        }
    }

    /**
     * Writes every live entry, pipelined as a join's puts are (a refresh of 3,660 entries one
     * round trip at a time held the KV thread for 40 s under a join storm, and the joins' puts
     * waited behind it); completes with how many writes failed.
     */
    private CompletableFuture<Integer> refreshAll() {
        AtomicInteger failed = new AtomicInteger();
        List<CompletableFuture<Void>> writes = new ArrayList<>(live.size());
        for (SubscriptionEntry e : live.values()) {
            writes.add(writeAsync(e).handle((v, ex) -> {
                if (ex != null && failed.incrementAndGet() == 1) {
                    LogCode.RegistryRefreshFailed.warn(log, "a refresh write failed: {}", ex.toString());
                }
                return null;
            }));
        }
        return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).thenApply(v -> {
            int n = failed.get();
            if (n > 0) {
                LogCode.RegistryRefreshFailed.warn(log, "{} of {} entries not refreshed", n, writes.size());
            } else {
                try {
                    worker.execute(() -> reput.complete(null)); // reput is the KV thread's
                } catch (RuntimeException closing) {
                    // closed meanwhile: nobody waits for the re-put any more
                }
            }
            return n;
        });
    }

    /** Lets queued writes and deletes finish (bounded, {@link KvThread#CLOSE_WAIT}), then stops the thread. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            worker.close();
        }
    }
}
