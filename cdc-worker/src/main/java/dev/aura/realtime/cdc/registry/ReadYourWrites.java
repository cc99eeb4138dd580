package dev.aura.realtime.cdc.registry;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import io.nats.client.Connection;
import io.nats.client.Message;
import io.nats.client.api.StreamInfo;
import io.nats.client.api.StreamState;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read your writes (docs/design.md C8): ws-front tells a client "Subscribed to PostgreSQL" once the
 * server acknowledged its registry put, and the client may commit a row at once. {@link
 * #awaitApplied} therefore waits until the watch has applied the bucket's last stream sequence
 * ({@link #position}, read after the poll read its flush position), so no change is matched
 * against a view that misses its subscriber while the slot moves past it.
 *
 * <p>Until the first load and during the re-watch after a reconnect there is no current view
 * ({@link #current} null), and it waits for one; during the periodic re-watch the previous view and
 * its watch stay current until the new one has loaded (a reload of a large bucket under a join
 * storm took longer than the sync timeout, and refused every batch). A watch that applied not one
 * event during a whole wait while the bucket was ahead of it is re-watched at once
 * ({@code rewatchNow}). Thread-safe: loaders report on jnats' dispatcher thread, the poll loop waits.
 */
final class ReadYourWrites {
    private static final Logger log = LoggerFactory.getLogger(RegistryWatch.class);
    /** JetStream's stream-info API subject of the bucket's stream (default API prefix). */
    private static final String STREAM_INFO_SUBJECT = "$JS.API.STREAM.INFO.KV_" + SubscriptionEntry.BUCKET;

    private final Connection nats;
    private final Duration syncTimeout;
    private final CdcMetrics metrics;
    private final Runnable rewatchNow;
    /** Notified whenever {@link #current} or its applied sequence changes. */
    private final Object progress = new Object();
    /** The loader whose index is the view and that applies live events; null while none is. */
    private volatile RegistryLoader current;
    /** {@code System.nanoTime()} of the last re-watch forced by a lagging view ({@link #rewatchStalled}). */
    private final AtomicLong lastForcedRewatch = new AtomicLong(System.nanoTime() - TimeUnit.HOURS.toNanos(1));

    /**
     * @param syncTimeout how long {@link #awaitApplied} waits for the view to catch up
     * @param rewatchNow starts a re-watch that keeps the view until its replacement loaded
     */
    ReadYourWrites(Connection nats, Duration syncTimeout, CdcMetrics metrics, Runnable rewatchNow) {
        this.nats = nats;
        this.syncTimeout = syncTimeout;
        this.metrics = metrics;
        this.rewatchNow = rewatchNow;
    }

    /** The loader whose view is current, or null while none is. */
    RegistryLoader current() {
        return current;
    }

    /** Makes {@code loader} the current one (null: none is), waking the waiters. */
    void current(RegistryLoader loader) {
        synchronized (progress) {
            current = loader;
            progress.notifyAll();
        }
    }

    /** A live loader applied the event at {@code sequence}: waiters may go on. */
    void applied(RegistryLoader loader, long sequence) {
        synchronized (progress) {
            loader.applied = sequence;
            progress.notifyAll();
        }
    }

    /**
     * Asks the server for the bucket stream's last sequence (one JetStream API request, sent at
     * once, answered asynchronously): every registry write it acknowledged before this call is at
     * or before it. A bucket holding no message answers 0: the newest message is the last to
     * expire, so when it is gone no watch will ever deliver its sequence.
     */
    CompletableFuture<Long> position() {
        try {
            return nats.requestWithTimeout(STREAM_INFO_SUBJECT, null, syncTimeout)
                    .thenApply(ReadYourWrites::lastSequence);
        } catch (RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private static long lastSequence(Message reply) {
        StreamInfo info = new StreamInfo(reply);
        if (info.hasError()) {
            throw new IllegalStateException(info.getError().toString());
        }
        StreamState state = info.getStreamState();
        return state.getMsgCount() == 0 ? 0 : state.getLastSequence();
    }

    /**
     * Returns once the live watch has applied {@code position}; the wait is usually nil.
     *
     * @throws CdcFailure ({@code nats_unavailable}) when the position cannot be read or the view
     *     does not catch up within the sync timeout; the batch must not be matched
     */
    void awaitApplied(CompletableFuture<Long> position) throws CdcFailure, InterruptedException {
        long started = System.nanoTime();
        long deadline = started + syncTimeout.toNanos();
        try {
            long target;
            try {
                target = position.get(syncTimeout.toNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                throw CdcFailure.retriable(
                        CdcReason.NATS_UNAVAILABLE, "cannot read the subscription registry's state: " + cause, cause);
            }
            synchronized (progress) {
                RegistryLoader first = current;
                long firstApplied = first == null ? -1 : first.applied;
                while (true) {
                    RegistryLoader live = current;
                    if (live != null && live.applied >= target) {
                        return;
                    }
                    long leftNanos = deadline - System.nanoTime();
                    if (leftNanos <= 0) {
                        if (live != null && live == first && live.applied == firstApplied) {
                            rewatchStalled(live.applied, target); // not one event in the whole wait
                        }
                        throw CdcFailure.retriable(
                                CdcReason.NATS_UNAVAILABLE,
                                live == null
                                        ? "subscription registry not loaded yet"
                                        : "subscription registry view at sequence " + live.applied + ", bucket at "
                                                + target + " after "
                                                + syncTimeout.toMillis() + " ms",
                                null);
                    }
                    progress.wait(Math.max(1, leftNanos / 1_000_000));
                }
            }
        } finally {
            metrics.registrySync.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * The live watch applied no event during a whole sync timeout while the bucket was ahead of
     * it: its push consumer may have stalled. Starts a re-watch at once, at most one per sync
     * timeout, instead of waiting for the periodic one (a minute of CDC inactive); the stalled view
     * stays current until the new one has loaded. A watch that advances but lags is left alone: a
     * re-watch replays the whole bucket and would only add to the load behind the lag (bench
     * figure 9: a storm's registry writes outran the watch, see docs/performance-analysis-2026-12.md).
     */
    private void rewatchStalled(long applied, long target) {
        long now = System.nanoTime();
        long last = lastForcedRewatch.get();
        if (now - last < syncTimeout.toNanos() || !lastForcedRewatch.compareAndSet(last, now)) {
            return;
        }
        log.warn(
                "[RegistryWatchStalled] subscription registry view stuck at sequence {}, bucket at {}: re-watching",
                applied,
                target);
        metrics.registryRewatchForced.increment();
        rewatchNow.run();
    }
}
