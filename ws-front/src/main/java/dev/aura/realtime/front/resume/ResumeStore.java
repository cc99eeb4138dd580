package dev.aura.realtime.front.resume;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.ResumeRecord;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The JetStream KV bucket {@link ResumeRecord#BUCKET} (memory storage, created when absent) of
 * resume records and pointers (docs/design.md R). Every call runs on a virtual thread and
 * completes its future there; callers hop back to their event loop.
 */
public final class ResumeStore implements AutoCloseable {
    /** A record and its KV revision (for the compare-and-set claim). */
    public record Found(ResumeRecord record, long revision) {}

    /** How long an untouched record or pointer stays in the bucket at most. */
    public static final Duration MAX_AGE = Duration.ofHours(25);

    private final Connection nats;
    private final ObjectMapper mapper;
    private final KvBuckets.Spec spec;
    private final ExecutorService io = Executors.newVirtualThreadPerTaskExecutor();
    private volatile KeyValue kv;

    public ResumeStore(Connection nats, ObjectMapper mapper, long maxBytes) {
        this.nats = nats;
        this.mapper = mapper;
        this.spec = new KvBuckets.Spec(ResumeRecord.BUCKET, MAX_AGE, maxBytes, ResumeRecord.MAX_BYTES);
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
                        throw new java.util.concurrent.CompletionException(e);
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
     * Claims {@code key}: creates it when {@code expectedRevision} is 0, else updates it only if
     * nobody wrote it since that revision (two tabs resuming the same record: one wins).
     */
    public CompletableFuture<Long> claim(String key, ResumeRecord record, long expectedRevision) {
        return async(() -> {
            byte[] value = mapper.writeValueAsBytes(record);
            return expectedRevision == 0 ? kv().create(key, value) : kv().update(key, value, expectedRevision);
        });
    }

    /** Creates the bucket when absent (blocking, at start-up). */
    public void start() throws Exception {
        kv();
    }

    /**
     * Writes the record: published at once on the key's {@code $KV} subject (what a KV put sends),
     * so one caller's writes of one key reach the stream in call order; completes with the ack.
     */
    public CompletableFuture<Void> put(String key, ResumeRecord record) {
        try {
            return publish(key, mapper.writeValueAsBytes(record), null);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    public CompletableFuture<Void> putPointer(String key, String recordKey) {
        return publish(key, recordKey.getBytes(StandardCharsets.UTF_8), null);
    }

    /** Deletes the record, ordered after the caller's earlier puts (a {@code KV-Operation: DEL} marker). */
    public CompletableFuture<Void> delete(String key) {
        return publish(key, null, new Headers().put("KV-Operation", "DEL"));
    }

    private CompletableFuture<Void> publish(String key, byte[] value, Headers headers) {
        try {
            NatsMessage.Builder m = NatsMessage.builder().subject("$KV." + spec.name() + "." + key);
            if (value != null) {
                m.data(value);
            }
            if (headers != null) {
                m.headers(headers);
            }
            return nats.jetStream().publishAsync(m.build()).thenApply(ack -> null);
        } catch (Exception e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    @Override
    public void close() {
        io.shutdown();
    }
}
