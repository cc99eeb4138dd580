package dev.aura.realtime.front.relay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.log.LogCode;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link SubscriptionRegistry} on the JetStream KV bucket {@link SubscriptionEntry#BUCKET}
 * (memory storage, max age {@code SubscriptionEntry.MAX_AGE}; created when absent).
 *
 * <p>Threads: one {@link KvThread} {@code aura-registry} does every KV call (they block on the
 * JetStream ack), so puts and deletes of one key keep their order and event loops never block.
 * Every {@code SUBSCRIPTION_REFRESH_MS} it re-puts all live entries, keeping them younger than
 * the bucket's max age; {@link #reputAll()} does the same after a NATS reconnect.
 */
public final class KvSubscriptionRegistry implements SubscriptionRegistry {
    private static final Logger log = LoggerFactory.getLogger(KvSubscriptionRegistry.class);

    private final Connection connection;
    private final Duration ttl;
    private final ObjectMapper mapper;
    private final Map<String, SubscriptionEntry> live = new ConcurrentHashMap<>();
    private final KvThread worker;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile KeyValue kv;

    public KvSubscriptionRegistry(Connection connection, Duration ttl, Duration refresh, ObjectMapper mapper) {
        this.connection = connection;
        this.ttl = ttl;
        this.mapper = mapper;
        this.worker = new KvThread("aura-registry", LogCode.RegistryCloseTimeout);
        worker.every(refresh, this::refreshAll);
    }

    /** Creates the bucket when absent and binds to it (blocking, at start-up). */
    public void start() throws IOException, JetStreamApiException {
        bucket();
    }

    private KeyValue bucket() throws IOException, JetStreamApiException {
        KeyValue current = kv;
        if (current != null) {
            return current;
        }
        kv = KvBuckets.ensure(connection, SubscriptionEntry.BUCKET, ttl);
        return kv;
    }

    @Override
    public CompletableFuture<Void> put(SubscriptionEntry entry) {
        live.put(entry.key(), entry);
        CompletableFuture<Void> done = new CompletableFuture<>();
        try {
            worker.execute(() -> {
                try {
                    write(entry);
                    done.complete(null);
                } catch (Exception e) {
                    done.completeExceptionally(e);
                }
            });
        } catch (RuntimeException rejected) {
            done.completeExceptionally(rejected);
        }
        return done;
    }

    private void write(SubscriptionEntry entry) throws Exception {
        if (live.get(entry.key()) == null) {
            return; // removed before its turn
        }
        try {
            bucket().put(entry.key(), mapper.writeValueAsBytes(live.getOrDefault(entry.key(), entry)));
        } catch (Exception e) {
            kv = null; // the next write re-checks the bucket: a restarted server may have lost it (memory storage)
            throw e;
        }
    }

    @Override
    public void remove(String key) {
        if (live.remove(key) == null) {
            return;
        }
        try {
            worker.execute(() -> {
                try {
                    bucket().delete(key);
                } catch (Exception e) {
                    LogCode.RegistryDeleteFailed.warn(
                            log, "{}: {} (expires with the bucket's max age)", key, e.toString());
                }
            });
        } catch (RuntimeException rejected) {
            LogCode.RegistryDeleteFailed.warn(log, "{}: registry closed", key);
        }
    }

    /**
     * Re-puts every live entry soon (after a NATS reconnect), re-creating the bucket first if the
     * server lost it (memory storage does not survive a nats-server restart). Retried every second
     * while it fails (JetStream may answer a moment after the connection is back), for at most
     * {@link #REPUT_ATTEMPTS} attempts; the periodic refresh continues after that. Any thread.
     */
    public void reputAll() {
        reputAll(REPUT_ATTEMPTS);
    }

    private static final int REPUT_ATTEMPTS = 30;

    private void reputAll(int attemptsLeft) {
        try {
            worker.execute(() -> {
                kv = null;
                if (refreshAll() > 0 && attemptsLeft > 1 && !closed.get()) {
                    worker.schedule(() -> reputAll(attemptsLeft - 1), Duration.ofSeconds(1));
                } else {
                    log.info("registry: {} entries re-put after reconnect", live.size());
                }
            });
        } catch (RuntimeException rejected) {
            log.debug("registry closed; no re-put");
        }
    }

    /** Writes every live entry; returns how many writes failed. */
    private int refreshAll() {
        int failed = 0;
        for (SubscriptionEntry e : live.values()) {
            try {
                write(e);
            } catch (Exception ex) {
                failed++;
                if (failed == 1) {
                    LogCode.RegistryRefreshFailed.warn(log, "{}: {}", e.key(), ex.toString());
                }
            }
        }
        if (failed > 0) {
            LogCode.RegistryRefreshFailed.warn(log, "{} of {} entries not refreshed", failed, live.size());
        }
        return failed;
    }

    /** Lets queued writes and deletes finish (bounded, {@link KvThread#CLOSE_WAIT}), then stops the thread. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            worker.close();
        }
    }
}
