package dev.aura.realtime.front.resume;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.ChangeHistory;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.ResumeRecord;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.relay.BucketLedger;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JetStream KV bucket {@link ResumeRecord#BUCKET} (memory storage, created when absent) of
 * resume records and pointers (docs/design.md R). Blocking calls run on a virtual thread and
 * complete their future there; writes are published on the key's {@code $KV} subject at once (in
 * call order) and complete with the ack, whose sequence is the key's new revision.
 *
 * <p>Every byte is charged to its project (issue 38): each record and pointer this replica writes
 * at its stored size in a {@link BucketLedger} against the project's share (across replicas); a
 * claim that would take the project over it fails with {@link Refused}
 * ({@link ResumeReason#resume_quota_exceeded}), one the bucket itself refuses (full) with
 * {@link ResumeReason#resume_store_full}; a claim that lost the compare-and-set to another channel
 * (a second tab) fails with {@link Lost}. A parked record and its pointer are deleted at the
 * window plus {@link #MARGIN} ({@link #parked}), conditionally on the revisions this replica
 * wrote, so an adoption meanwhile keeps them. nats-server 2.9 has no per-key TTL, and a key
 * expired by the bucket's max age gives no watch event: the records of a replica killed before it
 * parked them go with the max age, which follows the registry bucket's (the longest window, plus
 * {@link #MARGIN}) instead of 25 hours.
 */
public final class ResumeStore implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ResumeStore.class);

    /** A record and its KV revision (for the compare-and-set claim). */
    public record Found(ResumeRecord record, long revision) {}

    /** The claim or write was refused for a reason the client is told. */
    public static final class Refused extends RuntimeException {
        private final ResumeReason reason;

        Refused(ResumeReason reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }

        public ResumeReason reason() {
            return reason;
        }
    }

    /** Another channel wrote the record since it was read (a second tab claimed it first). */
    public static final class Lost extends RuntimeException {
        Lost(String message) {
            super(message, null, false, false);
        }
    }

    /** How long a parked record and its pointer stay beyond the window: a late rejoin is told it is late. */
    public static final Duration MARGIN = ChangeHistory.AGE_MARGIN;
    /** How often parked records past their time are deleted, and the bucket's max age checked. */
    static final Duration SWEEP = Duration.ofSeconds(5);

    /** JetStream's compare-and-set header. */
    private static final String EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence";
    /** nats-server: the subject's last sequence was not the expected one. */
    private static final int WRONG_LAST_SEQUENCE = 10071;
    /** nats-server: the stream (the bucket) is at its {@code max_bytes}. */
    private static final int MAXIMUM_BYTES_EXCEEDED = 10077;
    /** nats-server: JetStream has no resources (memory) left. */
    private static final int INSUFFICIENT_RESOURCES = 10023;

    /** A parked record of this replica, and its pointer, until their deletion. */
    private record Parked(String projectId, String pointerKey, long deleteAtMs, long revision, long pointerRevision) {}

    private final Connection nats;
    private final ObjectMapper mapper;
    private final KvBuckets.Spec spec;
    private final BucketLedger ledger;
    private final BucketLedger.Shares shares;
    private final Supplier<Duration> registryMaxAge;
    private final Clock clock;
    private final ExecutorService io = Executors.newVirtualThreadPerTaskExecutor();
    private final ScheduledExecutorService sweeper = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-resume-sweep").daemon().factory());
    private final Map<String, Parked> parked = new ConcurrentHashMap<>();
    private volatile KeyValue kv;
    private volatile Duration maxAge;

    /**
     * @param ledger this replica's bytes per project in the bucket
     * @param shares each project's share of the bucket and the other replicas' bytes of it
     * @param registryMaxAge the registry bucket's max age in force: this bucket's is {@link #MARGIN} more
     */
    public ResumeStore(
            Connection nats,
            ObjectMapper mapper,
            long maxBytes,
            BucketLedger ledger,
            BucketLedger.Shares shares,
            Supplier<Duration> registryMaxAge,
            Clock clock) {
        this.nats = nats;
        this.mapper = mapper;
        this.ledger = ledger;
        this.shares = shares;
        this.registryMaxAge = registryMaxAge;
        this.clock = clock;
        this.maxAge = SubscriptionEntry.MAX_AGE.plus(MARGIN);
        this.spec = new KvBuckets.Spec(ResumeRecord.BUCKET, maxAge, maxBytes, ResumeRecord.MAX_BYTES);
    }

    /** The bucket's max age in force (the ledger's marker life). */
    public Duration maxAge() {
        return maxAge;
    }

    private KeyValue kv() throws Exception {
        KeyValue k = kv;
        if (k == null) {
            k = KvBuckets.ensure(nats, spec);
            kv = k;
        }
        return k;
    }

    private interface Io<T> {
        T run() throws Exception;
    }

    private <T> CompletableFuture<T> async(Io<T> step) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        return step.run();
                    } catch (RuntimeException e) {
                        kv = null;
                        throw e;
                    } catch (Exception e) {
                        kv = null;
                        throw new CompletionException(e);
                    }
                },
                io);
    }

    /** The record under {@code key}, or null. */
    public CompletableFuture<Found> get(String key) {
        return async(() -> {
            KeyValueEntry e = kv().get(key);
            if (e == null || e.getOperation() != KeyValueOperation.PUT || e.getValue() == null) {
                return null;
            }
            if (e.getValue().length > ResumeRecord.MAX_BYTES) {
                return null;
            }
            return new Found(mapper.readValue(e.getValue(), ResumeRecord.class), e.getRevision());
        });
    }

    /** The text under a pointer key, or null. */
    public CompletableFuture<String> pointer(String key) {
        return async(() -> {
            KeyValueEntry e = kv().get(key);
            return e == null || e.getOperation() != KeyValueOperation.PUT || e.getValue() == null
                    ? null
                    : new String(e.getValue(), StandardCharsets.UTF_8);
        });
    }

    /**
     * Claims {@code key} for {@code projectId}: creates it when {@code expectedRevision} is 0, else
     * updates it only if nobody wrote it since that revision (two tabs resuming the same record:
     * one wins). Charged with the pointer it names against the project's share first. Blocking.
     *
     * @return the record's revision
     * @throws Refused over the project's share, or the bucket is full
     * @throws Lost another channel claimed it first
     */
    public long claim(String projectId, String key, ResumeRecord record, long expectedRevision, String pointerKey)
            throws Exception {
        byte[] value = mapper.writeValueAsBytes(record);
        long allowed = shares.share(projectId) - shares.elsewhere(projectId);
        parked.remove(key); // adopted again here: no longer this replica's to delete
        if (!ledger.charge(projectId, key, ledger.storedBytes(key, value.length), allowed)
                || !ledger.charge(projectId, pointerKey, ledger.storedBytes(pointerKey, key.length()), allowed)) {
            ledger.forget(projectId, key);
            throw new Refused(
                    ResumeReason.resume_quota_exceeded,
                    "project " + projectId + " over its share of " + ResumeRecord.BUCKET + " ("
                            + shares.share(projectId) + " bytes)");
        }
        try {
            return expectedRevision == 0 ? kv().create(key, value) : kv().update(key, value, expectedRevision);
        } catch (JetStreamApiException e) {
            ledger.forget(projectId, key);
            if (e.getApiErrorCode() == WRONG_LAST_SEQUENCE) {
                throw new Lost(e.getMessage());
            }
            if (full(e)) {
                throw new Refused(ResumeReason.resume_store_full, e.getMessage());
            }
            kv = null;
            throw e;
        }
    }

    private static boolean full(JetStreamApiException e) {
        return e.getApiErrorCode() == MAXIMUM_BYTES_EXCEEDED || e.getApiErrorCode() == INSUFFICIENT_RESOURCES;
    }

    /** Creates the bucket when absent (blocking, at start-up) and starts the sweep. */
    public void start() throws Exception {
        kv();
        maxAge = KvBuckets.maxAge(nats, spec); // an older bucket's (25 h) is corrected at the first sweep
        long ms = SWEEP.toMillis();
        sweeper.scheduleWithFixedDelay(this::sweep, ms, ms, TimeUnit.MILLISECONDS);
    }

    /**
     * Writes the record of {@code projectId}: published at once on the key's {@code $KV} subject
     * (what a KV put sends), so one caller's writes of one key reach the stream in call order;
     * completes with the new revision. Charged at its size (a claimed record is never refused).
     */
    public CompletableFuture<Long> put(String projectId, String key, ResumeRecord record) {
        try {
            byte[] value = mapper.writeValueAsBytes(record);
            ledger.charge(projectId, key, ledger.storedBytes(key, value.length), Long.MAX_VALUE);
            return publish(key, value, null);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    /** Writes the pointer {@code key} of {@code projectId} naming {@code recordKey}; completes with its revision. */
    public CompletableFuture<Long> putPointer(String projectId, String key, String recordKey) {
        ledger.charge(projectId, key, ledger.storedBytes(key, recordKey.length()), Long.MAX_VALUE);
        return publish(key, recordKey.getBytes(StandardCharsets.UTF_8), null);
    }

    /** Deletes the record, ordered after the caller's earlier puts (a {@code KV-Operation: DEL} marker, charged). */
    public CompletableFuture<Long> delete(String projectId, String key) {
        parked.remove(key);
        ledger.release(projectId, key);
        return publish(key, null, new Headers().put("KV-Operation", "DEL"));
    }

    /**
     * Deletes {@code key} only if {@code revision} is still its last write (nobody adopted it
     * since): its marker is charged then; else this replica's charge of it ends.
     */
    public CompletableFuture<Long> deleteIfUnchanged(String projectId, String key, long revision) {
        if (revision <= 0) {
            ledger.forget(projectId, key);
            return CompletableFuture.completedFuture(0L);
        }
        return publish(
                        key,
                        null,
                        new Headers()
                                .put("KV-Operation", "DEL")
                                .put(EXPECTED_LAST_SUBJECT_SEQUENCE, Long.toString(revision)))
                .whenComplete((seq, e) -> {
                    if (e == null) {
                        ledger.release(projectId, key);
                    } else {
                        ledger.forget(projectId, key);
                    }
                });
    }

    /**
     * The record {@code key} (revision {@code revision}) and its pointer (revision
     * {@code pointerRevision}) were parked until {@code untilMs}: both are deleted {@link #MARGIN}
     * after it unless written again meanwhile.
     */
    void parked(String projectId, String key, long revision, String pointerKey, long pointerRevision, long untilMs) {
        parked.put(key, new Parked(projectId, pointerKey, untilMs + MARGIN.toMillis(), revision, pointerRevision));
    }

    /** Deletes the parked records past their time; keeps the bucket's max age at the registry's plus the margin. */
    private void sweep() {
        long now = clock.millis();
        for (Map.Entry<String, Parked> e : parked.entrySet()) {
            Parked p = e.getValue();
            if (p.deleteAtMs() <= now && parked.remove(e.getKey(), p)) {
                deleteIfUnchanged(p.projectId(), e.getKey(), p.revision());
                deleteIfUnchanged(p.projectId(), p.pointerKey(), p.pointerRevision());
            }
        }
        Duration wanted = registryMaxAge.get().plus(MARGIN);
        if (!wanted.equals(maxAge)) {
            try {
                KvBuckets.setMaxAge(nats, spec, wanted);
                maxAge = wanted;
            } catch (Exception ex) {
                LogCode.ResumeBucketMaxAgeFailed.warn(
                        log, "{} max age not set to {}: {}", ResumeRecord.BUCKET, wanted, ex.toString());
            }
        }
    }

    private CompletableFuture<Long> publish(String key, byte[] value, Headers headers) {
        try {
            NatsMessage.Builder m = NatsMessage.builder().subject("$KV." + spec.name() + "." + key);
            if (value != null) {
                m.data(value);
            }
            if (headers != null) {
                m.headers(headers);
            }
            return nats.jetStream().publishAsync(m.build()).thenApply(ack -> ack.getSeqno());
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void close() {
        sweeper.shutdownNow();
        io.shutdown();
    }
}
