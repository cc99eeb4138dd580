package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.common.wire.AuraHeaders;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes to core NATS (not JetStream; docs/design.md C10) with the {@code Aura-Origin},
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
public final class EventPublisher implements ChangePublisher, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventPublisher.class);
    private final Connection nats;
    private final String origin;
    private final String barrierSubject;
    private final Dispatcher barrier;
    private final AtomicLong markers = new AtomicLong();
    private final ConcurrentSkipListMap<Long, CountDownLatch> pending = new ConcurrentSkipListMap<>();
    private final AtomicLong silentFlushes = new AtomicLong();

    public EventPublisher(Connection nats, String origin) {
        this.nats = nats;
        this.origin = origin;
        this.barrierSubject = "_AURA.barrier." + nats.createInbox().substring("_INBOX.".length());
        this.barrier = nats.createDispatcher(msg -> {
            long n = Long.parseLong(new String(msg.getData(), StandardCharsets.US_ASCII));
            // Markers come back in order: this one proves every earlier marker's publishes too.
            Map<Long, CountDownLatch> done = pending.headMap(n, true);
            done.values().forEach(CountDownLatch::countDown);
            done.clear();
        });
        barrier.subscribe(barrierSubject);
    }

    /** While reconnecting, jnats buffers the message and {@link #flush} fails instead. */
    @Override
    public void publish(String subject, String eventId, long leaseEpoch, byte[] body) throws CdcFailure {
        Headers headers = new Headers()
                .add(AuraHeaders.ORIGIN, origin)
                .add(AuraHeaders.EVENT_ID, eventId)
                .add(AuraHeaders.LEASE_EPOCH, Long.toString(leaseEpoch));
        send(subject, headers, body);
    }

    /**
     * Publishes without event headers (status messages).
     *
     * @throws CdcFailure ({@code nats_unavailable}) when the connection is closed
     */
    public void publishPlain(String subject, byte[] body) throws CdcFailure {
        send(subject, new Headers().add(AuraHeaders.ORIGIN, origin), body);
    }

    /** jnats refuses a larger body (headers count too; a few hundred bytes are kept for them). */
    @Override
    public long maxPayload() {
        long max = nats.getMaxPayload();
        return max <= 0 ? Long.MAX_VALUE : max - 512;
    }

    @Override
    public void flush(Duration timeout) throws CdcFailure, InterruptedException {
        long n = markers.incrementAndGet();
        CountDownLatch done = new CountDownLatch(1);
        pending.put(n, done);
        try {
            send(barrierSubject, null, Long.toString(n).getBytes(StandardCharsets.US_ASCII));
            if (!done.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                recoverIfDeaf();
                throw CdcFailure.retriable(
                        CdcReason.NATS_UNAVAILABLE,
                        "NATS did not confirm the batch within " + timeout.toMillis() + " ms",
                        null);
            }
            silentFlushes.set(0);
        } finally {
            pending.remove(n);
        }
    }

    /** jnats throws {@link IllegalStateException} from a publish only when the connection is closed. */
    private void send(String subject, Headers headers, byte[] body) throws CdcFailure {
        try {
            nats.publish(subject, headers, body);
        } catch (IllegalStateException e) {
            throw CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "NATS connection closed: " + e.getMessage(), e);
        }
    }

    /**
     * A connection that claims to be connected but returns no marker is deaf: with jnats 2.25.1
     * a reconnect race left the writer sending nothing for good (nats-io/nats.java#1522, fixed in
     * 2.25.2; docs/reliability.md), and a half-open socket looks the same until jnats' pings
     * notice, minutes later. Two marker timeouts in a row on a connection that claims to be
     * connected force a fresh reconnect (jnats {@code forceReconnect}); the batch is re-read from
     * the slot meanwhile, so nothing is lost. A batch that already failed (e.g. its registry
     * check) does not publish a marker, so only batches that reach the flush count here.
     */
    private void recoverIfDeaf() {
        if (nats.getStatus() != Connection.Status.CONNECTED) {
            silentFlushes.set(0);
            return;
        }
        if (silentFlushes.incrementAndGet() >= 2) {
            silentFlushes.set(0);
            log.warn(
                    "[NatsConnectionDeaf] NATS reports connected but returned no flush marker twice; forcing a reconnect");
            try {
                nats.forceReconnect();
            } catch (IOException e) {
                log.warn("[NatsReconnectFailed] forced NATS reconnect failed: {}", e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        nats.closeDispatcher(barrier);
    }
}
