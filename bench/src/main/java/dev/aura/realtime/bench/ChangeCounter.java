package dev.aura.realtime.bench;

import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * A plain NATS subscriber on the project's change subjects: counts events and remembers when
 * the latest arrived (the end of a CDC throughput run).
 */
final class ChangeCounter implements AutoCloseable {
    private final Connection nats;
    private final Dispatcher dispatcher;
    private final AtomicLong count = new AtomicLong();
    private volatile long lastNanos;
    private volatile long firstNanos;
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
        if (count.getAndIncrement() == 0) {
            firstNanos = now;
        }
        lastNanos = now;
        hook.accept(m);
    }

    void hook(Consumer<Message> h) {
        hook = h;
    }

    void reset() {
        count.set(0);
        firstNanos = 0;
        lastNanos = 0;
    }

    long count() {
        return count.get();
    }

    long lastNanos() {
        return lastNanos;
    }

    long firstNanos() {
        return firstNanos;
    }

    /**
     * Waits until {@code n} events arrived, or nothing arrived for {@code stallMs}, or
     * {@code maxMs} passed. @return true when all arrived
     */
    boolean await(long n, long stallMs, long maxMs) {
        return Progress.await(count::get, n, Duration.ofMillis(stallMs), Duration.ofMillis(maxMs));
    }

    @Override
    public void close() {
        nats.closeDispatcher(dispatcher);
    }
}
