package dev.aura.realtime.front.relay;

import dev.aura.realtime.front.log.LogCode;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one named daemon thread of a component that writes a JetStream KV bucket. Every KV call
 * blocks until the server acknowledges it, so they all run here: in submission order (a put and
 * the delete of the same key never swap) and never on an event loop. {@link #close()} lets
 * queued calls finish for at most {@link #CLOSE_WAIT}, then abandons the rest with a WARN.
 */
public final class KvThread implements AutoCloseable {
    /** How long {@link #close()} waits for queued KV calls. */
    public static final Duration CLOSE_WAIT = Duration.ofSeconds(5);

    private static final Logger log = LoggerFactory.getLogger(KvThread.class);

    private final String name;
    private final LogCode closeTimeout;
    private final ScheduledExecutorService executor;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param name the thread name, e.g. {@code aura-registry}
     * @param closeTimeout logged when {@link #close()} abandons queued calls
     */
    public KvThread(String name, LogCode closeTimeout) {
        this.name = name;
        this.closeTimeout = closeTimeout;
        this.executor = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name(name).daemon().factory());
    }

    /**
     * Queues a task. Any thread.
     *
     * @throws RejectedExecutionException after {@link #close()}
     */
    public void execute(Runnable task) {
        executor.execute(task);
    }

    /** Queues a task with a result. Any thread. */
    public <T> Future<T> submit(Callable<T> task) {
        return executor.submit(task);
    }

    /** Runs {@code task} once after {@code delay}. */
    public void schedule(Runnable task, Duration delay) {
        executor.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Runs {@code task} every {@code period}, first after one period. */
    public void every(Duration period, Runnable task) {
        executor.scheduleAtFixedRate(task, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets queued calls finish (bounded by {@link #CLOSE_WAIT}), then stops the thread. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        executor.shutdown();
        try {
            if (!executor.awaitTermination(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                closeTimeout.warn(log, "{}: pending KV operations abandoned", name);
                executor.shutdownNow();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            executor.shutdownNow();
        }
    }
}
