package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.common.wire.AuraHeaders;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.PublishOptions;
import io.nats.client.api.PublishAck;
import io.nats.client.impl.Headers;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
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
 *
 * <p>History (postgres_changes resume, docs/design.md R): a change on a subject of a project with
 * resume on ({@code history}) is published with a JetStream publish instead (message id = the
 * event id, so a re-published batch is stored once); core subscribers receive it exactly as a core
 * publish. {@link #flush} then also waits for the acks of every such publish made before it, so
 * the slot advances only after the history stored the events.
 */
public final class EventPublisher implements ChangePublisher, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(EventPublisher.class);
    /**
     * Most history publishes awaiting their ack at once. jnats cancels an ack that has not arrived
     * within the JetStream request timeout, so a backlog published all at once on a busy server
     * lost most acks to that timeout although the stream stored the events.
     */
    static final int MAX_HISTORY_IN_FLIGHT = 2_048;

    private final Connection nats;
    private final String origin;
    private final String barrierSubject;
    private final Dispatcher barrier;
    private final AtomicLong markers = new AtomicLong();
    private final ConcurrentSkipListMap<Long, CountDownLatch> pending = new ConcurrentSkipListMap<>();
    private final AtomicLong silentFlushes = new AtomicLong();
    private final Predicate<String> history;
    private final AtomicLong acksIssued = new AtomicLong();
    /** History publishes awaiting their ack, by issue number. */
    private final ConcurrentSkipListMap<Long, CompletableFuture<PublishAck>> acks = new ConcurrentSkipListMap<>();

    public EventPublisher(Connection nats, String origin) {
        this(nats, origin, subject -> false);
    }

    /** @param history whether a change subject goes to a history stream (JetStream publish, ack awaited) */
    public EventPublisher(Connection nats, String origin, Predicate<String> history) {
        this.nats = nats;
        this.origin = origin;
        this.history = history;
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
        if (history.test(subject)) {
            awaitRoom();
            try {
                CompletableFuture<PublishAck> ack = jetStream()
                        .publishAsync(
                                subject,
                                headers,
                                body,
                                PublishOptions.builder().messageId(eventId).build());
                acks.put(acksIssued.incrementAndGet(), ack);
            } catch (IOException | IllegalStateException e) {
                throw CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "history publish failed: " + e.getMessage(), e);
            }
            return;
        }
        send(subject, headers, body);
    }

    /**
     * Stores a message in a JetStream stream (the late lane and the quarantine, docs/design.md C13,
     * C14) with {@code messageId} for de-duplication; {@link #flush} waits for its ack with the
     * history acks, so the slot advances only after the stream stored it.
     *
     * @return the ack, completed when the stream stored the message (or failed)
     */
    public CompletableFuture<PublishAck> store(String subject, Headers headers, byte[] body, String messageId)
            throws CdcFailure {
        awaitRoom();
        try {
            CompletableFuture<PublishAck> ack = jetStream()
                    .publishAsync(
                            subject,
                            headers,
                            body,
                            PublishOptions.builder().messageId(messageId).build());
            acks.put(acksIssued.incrementAndGet(), ack);
            return ack;
        } catch (IOException | IllegalStateException e) {
            throw CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "JetStream store failed: " + e.getMessage(), e);
        }
    }

    private volatile io.nats.client.JetStream jetStream;

    private io.nats.client.JetStream jetStream() throws IOException {
        io.nats.client.JetStream js = jetStream;
        if (js == null) {
            js = nats.jetStream();
            jetStream = js;
        }
        return js;
    }

    /** How long a publish waits for the oldest outstanding ack when {@link #MAX_HISTORY_IN_FLIGHT} are. */
    private static final long ROOM_WAIT_MS = 10_000;

    /** Waits until fewer than {@link #MAX_HISTORY_IN_FLIGHT} history acks are outstanding. */
    private void awaitRoom() throws CdcFailure {
        while (acks.size() >= MAX_HISTORY_IN_FLIGHT) {
            Map.Entry<Long, CompletableFuture<PublishAck>> oldest = acks.firstEntry();
            if (oldest == null) {
                return;
            }
            try {
                oldest.getValue().get(ROOM_WAIT_MS, TimeUnit.MILLISECONDS);
                acks.remove(oldest.getKey(), oldest.getValue());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "interrupted awaiting history acks", e);
            } catch (ExecutionException | CancellationException | TimeoutException e) {
                acks.clear();
                throw notStored(e);
            }
        }
    }

    /** History publishes made before the call whose ack has not been awaited yet. */
    int unackedHistory() {
        return acks.size();
    }

    /** Waits for the acks of every history publish issued so far (each flush: the durability point). */
    private void awaitAcks(long deadlineNanos) throws CdcFailure, InterruptedException {
        long upTo = acksIssued.get();
        for (Map.Entry<Long, CompletableFuture<PublishAck>> e :
                acks.headMap(upTo, true).entrySet()) {
            long leftMs = Math.max(1, (deadlineNanos - System.nanoTime()) / 1_000_000);
            try {
                e.getValue().get(leftMs, TimeUnit.MILLISECONDS);
                acks.remove(e.getKey());
            } catch (ExecutionException | CancellationException | TimeoutException failed) {
                acks.headMap(upTo, true).clear();
                throw notStored(failed);
            }
        }
    }

    /**
     * The failure of a history ack. The caller has dropped the batch's other acks: the batch fails
     * and is published again (the stream keeps one copy per event id), and an ack of the failed
     * batch must not fail the flushes after it.
     */
    private static CdcFailure notStored(Exception e) {
        if (e instanceof TimeoutException) {
            return CdcFailure.retriable(
                    CdcReason.NATS_UNAVAILABLE, "history stream did not acknowledge an event in time", null);
        }
        Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
        return CdcFailure.retriable(
                CdcReason.NATS_UNAVAILABLE, "history stream did not store an event: " + cause, cause);
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
        long deadline = System.nanoTime() + timeout.toNanos();
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
            awaitAcks(deadline);
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
