package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.common.wire.AuraHeaders;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.impl.Headers;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes to core NATS (not JetStream; PRODUCT.md C10) with the {@code Aura-Origin},
 * {@code Aura-Event-Id} and {@code Aura-Lease-Epoch} headers. Thread-safe (jnats connections are).
 *
 * <p>{@link #flush} is the durability point of the CDC loop: the slot is advanced only after it
 * returned, i.e. after the server processed everything published before it. It publishes a
 * numbered marker to a subject only this connection subscribes to and waits until the marker
 * comes back: the server handles one connection's messages in order, so by then every earlier
 * publish was routed to its subscribers. We do not use {@code Connection.flush}: its PING/PONG
 * futures are matched first-in first-out, and a PING lost around a reconnect leaves every later
 * flush one PONG behind and timing out while the connection is healthy (seen here under load;
 * the same failure mode as nats-io/nats.py2#36). A marker lost with a connection only fails that
 * one flush.
 */
public final class EventPublisher implements AutoCloseable {
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(EventPublisher.class);
    private final Connection nats;
    private final String origin;
    private final String barrierSubject;
    private final Dispatcher barrier;
    private final AtomicLong markers = new AtomicLong();
    private final ConcurrentSkipListMap<Long, CompletableFuture<Void>> pending = new ConcurrentSkipListMap<>();
    private final AtomicLong silentFlushes = new AtomicLong();

    public EventPublisher(Connection nats, String origin) {
        this.nats = nats;
        this.origin = origin;
        this.barrierSubject = "_AURA.barrier." + nats.createInbox().substring("_INBOX.".length());
        this.barrier = nats.createDispatcher(msg -> {
            long n = Long.parseLong(new String(msg.getData(), StandardCharsets.US_ASCII));
            // Markers come back in order: this one proves every earlier marker's publishes too.
            Map<Long, CompletableFuture<Void>> done = pending.headMap(n, true);
            done.values().forEach(f -> f.complete(null));
            done.clear();
        });
        barrier.subscribe(barrierSubject);
    }

    /**
     * @throws IllegalStateException when the connection is closed (jnats); while reconnecting,
     *     jnats buffers the message and {@link #flush} fails instead
     */
    public void publish(String subject, String eventId, long leaseEpoch, byte[] body) {
        Headers headers = new Headers()
                .add(AuraHeaders.ORIGIN, origin)
                .add(AuraHeaders.EVENT_ID, eventId)
                .add(AuraHeaders.LEASE_EPOCH, Long.toString(leaseEpoch));
        nats.publish(subject, headers, body);
    }

    /** Publishes without event headers (status messages). */
    public void publishPlain(String subject, byte[] body) {
        nats.publish(subject, new Headers().add(AuraHeaders.ORIGIN, origin), body);
    }

    /**
     * @throws TimeoutException when the server did not confirm within {@code timeout} (not connected, slow)
     */
    public void flush(Duration timeout) throws TimeoutException, InterruptedException {
        long n = markers.incrementAndGet();
        CompletableFuture<Void> done = new CompletableFuture<>();
        pending.put(n, done);
        try {
            nats.publish(barrierSubject, Long.toString(n).getBytes(StandardCharsets.US_ASCII));
            done.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            silentFlushes.set(0);
        } catch (ExecutionException e) {
            throw new TimeoutException("flush marker failed: " + e.getCause());
        } catch (TimeoutException e) {
            recoverIfDeaf();
            throw e;
        } finally {
            pending.remove(n);
        }
    }

    /**
     * Seen here after nats-server restarts under load: jnats reports the connection CONNECTED
     * after a reconnect, yet nothing comes back on it (neither our markers nor JetStream API
     * replies) for minutes. Two marker timeouts in a row on a connection that claims to be
     * connected force a fresh reconnect (jnats {@code forceReconnect}), which restores delivery;
     * the batch is re-read from the slot meanwhile, so nothing is lost.
     */
    private void recoverIfDeaf() {
        if (nats.getStatus() != Connection.Status.CONNECTED) {
            silentFlushes.set(0);
            return;
        }
        if (silentFlushes.incrementAndGet() >= 2) {
            silentFlushes.set(0);
            log.warn(
                    "NatsConnectionDeaf: NATS reports connected but returned no flush marker twice; forcing a reconnect");
            try {
                nats.forceReconnect();
            } catch (java.io.IOException e) {
                log.warn("forced NATS reconnect failed: {}", e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        nats.closeDispatcher(barrier);
    }

    public boolean connected() {
        return nats.getStatus() == Connection.Status.CONNECTED;
    }
}
