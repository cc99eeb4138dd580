package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.KvBuckets;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.Message;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import io.nats.client.impl.NatsMessage;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * Pipelined writes to one KV bucket: each put or delete is the message jnats' {@code KeyValue}
 * sends, published on the key's {@code $KV.<bucket>.<key>} subject without waiting for the
 * previous one's ack (a join storm's writes are not one round trip each), and completes with the
 * stream's ack (its sequence, the key's new revision). Callers publish from one thread (the
 * registry's {@link KvThread}), so one key's writes reach the stream in order.
 *
 * <p>At most {@link #MAX_IN_FLIGHT} writes await their ack: the publishing thread waits for a
 * permit, so a storm of thousands of joins does not overrun the connection's outgoing queue
 * (jnats' 5,000 messages: "Output queue is full" failed the joins, the usage reports and the
 * limit lookups of a replica taking a 5,000-client reconnect storm, bench figure 9).
 */
final class KvPipeline {
    static final int MAX_IN_FLIGHT = 512;

    /** How long the publishing thread waits for an ack to free a permit before the write fails. */
    private static final Duration PERMIT_WAIT = Duration.ofSeconds(5);

    /** The header and value by which a KV delete marker is told from a put (what jnats' KeyValue.delete sends). */
    private static final String KV_OPERATION = "KV-Operation";

    private static final String KV_DELETE = "DEL";

    /** JetStream's header: store the message only when the subject's last sequence is this (a compare-and-set). */
    private static final String EXPECTED_LAST_SUBJECT_SEQUENCE = "Nats-Expected-Last-Subject-Sequence";

    private final Connection connection;
    private final KvBuckets.Spec bucket;
    private final Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);
    private volatile KeyValue kv;

    KvPipeline(Connection connection, KvBuckets.Spec bucket) {
        this.connection = connection;
        this.bucket = bucket;
    }

    /** Creates the bucket when absent and binds to it (blocking). */
    void ensureBucket() throws IOException, JetStreamApiException {
        if (kv == null) {
            kv = KvBuckets.ensure(connection, bucket);
        }
    }

    /** The next write re-checks the bucket first: a restarted server may have lost it (memory storage). */
    void recheckBucket() {
        kv = null;
    }

    /** Puts {@code value} under {@code key}. */
    CompletableFuture<Long> put(String key, byte[] value) {
        return publish(
                subject -> NatsMessage.builder().subject(subject).data(value).build(), key);
    }

    /** Deletes {@code key} (a delete marker, as {@code KeyValue.delete} writes). */
    CompletableFuture<Long> delete(String key) {
        return publish(
                subject -> NatsMessage.builder()
                        .subject(subject)
                        .headers(new Headers().put(KV_OPERATION, KV_DELETE))
                        .build(),
                key);
    }

    /** Deletes {@code key} only if {@code revision} is still its last write; fails otherwise. */
    CompletableFuture<Long> deleteIfLast(String key, long revision) {
        return publish(
                subject -> NatsMessage.builder()
                        .subject(subject)
                        .headers(new Headers()
                                .put(KV_OPERATION, KV_DELETE)
                                .put(EXPECTED_LAST_SUBJECT_SEQUENCE, Long.toString(revision)))
                        .build(),
                key);
    }

    /** Builds the message of one KV write from its {@code $KV.<bucket>.<key>} subject. */
    private interface KvMessage {
        Message build(String subject);
    }

    /**
     * Publishes one KV write once fewer than {@link #MAX_IN_FLIGHT} await their ack (waiting at
     * most {@link #PERMIT_WAIT}); completes with the stream's ack. A failure makes the next write
     * re-check the bucket.
     */
    private CompletableFuture<Long> publish(KvMessage message, String key) {
        try {
            ensureBucket();
            if (!inFlight.tryAcquire(PERMIT_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException(MAX_IN_FLIGHT + " registry writes unacknowledged for " + PERMIT_WAIT);
            }
            CompletableFuture<PublishAck> ack;
            try {
                ack = connection.jetStream().publishAsync(message.build("$KV." + bucket.name() + "." + key));
            } catch (Exception | Error e) {
                inFlight.release();
                throw e;
            }
            return ack.handle((a, e) -> {
                inFlight.release();
                if (e != null) {
                    kv = null;
                    throw e instanceof CompletionException ce ? ce : new CompletionException(e);
                }
                return a.getSeqno();
            });
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return CompletableFuture.failedFuture(e);
        } catch (Exception e) {
            kv = null;
            return CompletableFuture.failedFuture(e);
        }
    }
}
