package dev.aura.realtime.bench;

import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A plain NATS subscriber on the project's change subjects that counts one reader's events only
 * (issue 39): a message counts when its {@code Aura-Origin} is the reader's instance id, its
 * {@code Aura-Event-Id} was not counted before in this count, and the LSN the id starts with is
 * not before the count's first LSN. Everything else is tallied apart (another reader's messages,
 * copies, events of earlier backlogs), so a round can show that it counted only its own work.
 * Remembers when the first and the latest counted event arrived (the end of a throughput turn).
 */
final class ChangeCounter implements AutoCloseable {
    /** One count: whose events, from which LSN; the ids seen (touched by the dispatcher thread only). */
    private static final class Count {
        final String origin;
        final long fromLsn;
        final Set<String> ids = new HashSet<>();
        final AtomicLong counted = new AtomicLong();
        final AtomicLong foreign = new AtomicLong();
        final AtomicLong copies = new AtomicLong();
        final AtomicLong stale = new AtomicLong();
        volatile long firstNanos;
        volatile long lastNanos;

        Count(String origin, long fromLsn) {
            this.origin = origin;
            this.fromLsn = fromLsn;
        }
    }

    private final Connection nats;
    private final Dispatcher dispatcher;
    private volatile Count current = new Count("", 0);
    private volatile Consumer<Message> hook = m -> {};

    ChangeCounter(Connection nats, String projectId) {
        this.nats = nats;
        this.dispatcher = nats.createDispatcher(this::onMessage);
        dispatcher.setPendingLimits(-1, -1);
        dispatcher.subscribe(Subjects.CHANGES + "." + Subjects.encodeToken(projectId) + ".>");
        try {
            nats.flush(Duration.ofSeconds(5));
        } catch (Exception e) {
            throw new IllegalStateException("NATS flush after subscribe failed", e);
        }
    }

    private void onMessage(Message m) {
        long now = System.nanoTime();
        Count c = current;
        String origin = m.hasHeaders() ? m.getHeaders().getFirst(AuraHeaders.ORIGIN) : null;
        String id = m.hasHeaders() ? m.getHeaders().getFirst(AuraHeaders.EVENT_ID) : null;
        if (origin == null || !origin.equals(c.origin) || id == null) {
            c.foreign.incrementAndGet();
            return;
        }
        if (Long.compareUnsigned(lsnOf(id), c.fromLsn) < 0) {
            c.stale.incrementAndGet();
            return;
        }
        if (!c.ids.add(id)) {
            c.copies.incrementAndGet();
            return;
        }
        if (c.counted.getAndIncrement() == 0) {
            c.firstNanos = now;
        }
        c.lastNanos = now;
        hook.accept(m);
    }

    /** The LSN an event id starts with ({@code <X/Y>:<ordinal>...}); -1 when it has none. */
    static long lsnOf(String eventId) {
        int colon = eventId.indexOf(':');
        try {
            return Lsn.parse(colon < 0 ? eventId : eventId.substring(0, colon)).value();
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /** A hook called with every counted message (the dispatcher's thread). */
    void hook(Consumer<Message> h) {
        hook = h;
    }

    /** Starts a new count of {@code origin}'s events (any LSN). */
    void reset(String origin) {
        reset(origin, 0);
    }

    /** Starts a new count of {@code origin}'s events whose id's LSN is at least {@code fromLsn}. */
    void reset(String origin, long fromLsn) {
        current = new Count(origin, fromLsn);
    }

    /** Distinct events of the counted origin since the last reset. */
    long count() {
        return current.counted.get();
    }

    /** Messages of other origins (or without the headers) since the last reset. */
    long foreign() {
        return current.foreign.get();
    }

    /** Copies of events already counted since the last reset. */
    long copies() {
        return current.copies.get();
    }

    /** Events of the counted origin from before the count's first LSN. */
    long stale() {
        return current.stale.get();
    }

    long lastNanos() {
        return current.lastNanos;
    }

    long firstNanos() {
        return current.firstNanos;
    }

    /** "foreign 0, copies 0, earlier 0": what the count left out. */
    String leftOut() {
        return "left out: " + foreign() + " of other readers, " + copies() + " copies, " + stale() + " earlier";
    }

    /**
     * Waits until {@code n} events arrived, or nothing arrived for {@code stallMs}, or
     * {@code maxMs} passed. @return true when all arrived
     */
    boolean await(long n, long stallMs, long maxMs) {
        Count c = current;
        return Progress.await(c.counted::get, n, Duration.ofMillis(stallMs), Duration.ofMillis(maxMs));
    }

    @Override
    public void close() {
        nats.closeDispatcher(dispatcher);
    }
}
