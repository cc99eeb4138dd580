package dev.aura.realtime.cdc.registry;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.Message;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.api.StreamInfo;
import io.nats.client.api.StreamState;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cdc-worker's view of the subscription registry (docs/design.md C8): watches the JetStream
 * KV bucket {@link SubscriptionEntry#BUCKET} (jnats' public API only) into a
 * {@link SubscriptionIndex}, and holds matching back with a {@link ResyncGate} after a NATS
 * reconnect.
 *
 * <h2>Lifecycle</h2>
 * {@link #start()} creates the bucket if needed, watches it and waits (at most the load timeout)
 * until its current content is loaded. A full re-watch runs after every NATS reconnect (ordered
 * consumers are known not to resume reliably) and every resync period; it replays the bucket into
 * a fresh index and swaps it in at end of data, keeping entries of the previous view that the new
 * snapshot lacks until their max age (see {@link Loader#endOfData}). After the swap, each KV
 * event updates the index in place.
 *
 * <h2>Trust</h2>
 * Every ws-front may write the bucket, so no entry is trusted: one that is too large, does not
 * parse or has a {@link SubscriptionEntry#problem problem} is left out of the index, logged
 * ({@code RegistryEntryInvalid}) and counted ({@code aura_cdc_registry_entries_invalid_total}).
 *
 * <h2>Read your writes</h2>
 * ws-front tells a client "Subscribed to PostgreSQL" once the server acknowledged its registry
 * put, and the client may commit a row at once. {@link #awaitCurrent} therefore reads the
 * bucket's last stream sequence and waits until the watch has applied it: called before a batch
 * is matched (after the poll read its flush position), it guarantees that every binding
 * acknowledged before the batch's commits is in the view, so no change is matched against a view
 * that misses its subscriber while the slot moves past it. Until the first load and during the
 * re-watch after a reconnect there is no current view, and it waits for one; during the periodic
 * re-watch the previous view and its watch stay current until the new one has loaded (a reload of
 * a large bucket under a join storm took longer than the sync timeout, and refused every batch).
 *
 * <h2>Threads</h2>
 * jnats delivers watch events on its dispatcher thread and connection events on its connection
 * thread; re-watches run on {@code aura-subscription-resync}; the RLS shards read from any thread
 * and the poll loop calls {@link #awaitCurrent}.
 */
public final class RegistryWatch implements SubscriptionRegistry, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RegistryWatch.class);
    /** After a reconnect, re-watch attempts one second apart before waiting for the next period. */
    private static final int REWATCH_ATTEMPTS = 60;
    /** Invalid keys remembered so a re-watch does not log and count them again; cleared when full. */
    private static final int MAX_REMEMBERED_INVALID = 10_000;
    /** The JetStream stream behind the bucket. */
    private static final String STREAM = "KV_" + SubscriptionEntry.BUCKET;
    /** JetStream's stream-info API subject of the bucket's stream (default API prefix). */
    private static final String STREAM_INFO_SUBJECT = "$JS.API.STREAM.INFO." + STREAM;

    /**
     * @param resyncPeriod period of the full re-watch
     * @param loadTimeout how long {@link #start()} waits for the first load
     * @param syncTimeout how long {@link #awaitCurrent} waits for the view to catch up
     * @param reputTimeout how long, after a reconnect, matching waits for replicas to re-put
     * @param bucket the registry bucket's configuration, used when this worker creates it
     */
    public record Settings(
            Duration resyncPeriod,
            Duration loadTimeout,
            Duration syncTimeout,
            Duration reputTimeout,
            KvBuckets.Spec bucket) {}

    private final Connection nats;
    private final Clock clock;
    private final Settings settings;
    private final CdcMetrics metrics;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ResyncGate gate;
    private final CountDownLatch loaded = new CountDownLatch(1);
    private final ScheduledExecutorService resync = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-subscription-resync").daemon().factory());
    private volatile SubscriptionIndex view = new SubscriptionIndex(SubscriptionEntry.MAX_AGE);
    /** The bucket's max age as last read or set ({@link #maxAge(Duration)}); every index ignores entries older. */
    private volatile Duration maxAge = SubscriptionEntry.MAX_AGE;
    /** The loader whose index is {@link #view} and that applies live events; null while none is. */
    private volatile Loader current;
    /** Notified whenever {@link #current} or its applied sequence changes. */
    private final Object progress = new Object();

    private final Set<String> invalidKeys = ConcurrentHashMap.newKeySet();
    private AutoCloseable watch; // guarded by this
    /** During a periodic re-watch: the watch of the still-current view, closed once the new one loaded. */
    private AutoCloseable retiring; // guarded by this
    /** The loader of {@link #watch}; a loader that is no longer it never becomes current. */
    private volatile Loader loading;

    private volatile boolean closed;
    /** {@code System.nanoTime()} of the last re-watch forced by a lagging view ({@link #rewatchStalled}). */
    private final AtomicLong lastForcedRewatch = new AtomicLong(System.nanoTime() - TimeUnit.HOURS.toNanos(1));

    public RegistryWatch(Connection nats, Clock clock, Settings settings, CdcMetrics metrics) throws IOException {
        this.nats = nats;
        this.clock = clock;
        this.settings = settings;
        this.metrics = metrics;
        this.gate = new ResyncGate(clock, settings.reputTimeout());
    }

    /**
     * Creates the bucket if needed, starts watching and waits for the first load; schedules the
     * periodic re-watch.
     *
     * @throws IOException when NATS does not answer
     * @throws JetStreamApiException when JetStream refuses the bucket or the watch
     */
    public void start() throws IOException, JetStreamApiException, InterruptedException {
        rewatch(false);
        if (!loaded.await(settings.loadTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
            log.warn(
                    "[RegistryLoadTimeout] subscription registry not loaded within {} ms; starting anyway, "
                            + "but no batch is matched (and the slot not advanced past changes) until it is",
                    settings.loadTimeout().toMillis());
        }
        long period = settings.resyncPeriod().toMillis();
        synchronized (this) {
            if (!closed) {
                resync.scheduleWithFixedDelay(() -> safeRewatch(true), period, period, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Forwarded from the connection's listener: gate matching, and re-watch after a reconnect. */
    public void onConnectionEvent(ConnectionListener.Events event) {
        if (event == ConnectionListener.Events.DISCONNECTED) {
            // the server may come back without the memory bucket, with sequences starting over:
            // the current view proves nothing until the re-watch after the reconnect has loaded
            setCurrent(null);
            gate.disconnected(view);
        } else if (event == ConnectionListener.Events.RECONNECTED) {
            gate.reconnected();
        }
        if (event == ConnectionListener.Events.RECONNECTED || event == ConnectionListener.Events.RESUBSCRIBED) {
            resync.execute(() -> rewatchAfterReconnect(REWATCH_ATTEMPTS));
        }
    }

    @Override
    public List<SubscriptionEntry> candidates(String projectId, String table) {
        return view.candidates(projectId, table, clock.millis());
    }

    @Override
    public List<SubscriptionEntry> candidates(String projectId, dev.aura.realtime.cdc.event.BuiltEvent event) {
        return view.candidates(projectId, event.table(), event::filterRow, event.columnTypes(), clock.millis());
    }

    @Override
    public boolean synchronised() {
        return gate.open(view);
    }

    @Override
    public Set<String> awaitedReplicas() {
        return gate.awaited(view);
    }

    /**
     * The registry bucket's max age is now {@code age} ({@link RegistryMaxAge}, or as read at a
     * re-watch): the view and every later index keep entries that long after their last write.
     */
    public void maxAge(Duration age) {
        maxAge = age;
        view.maxAge(age);
        Loader l = loading;
        if (l != null) {
            l.target.maxAge(age);
        }
    }

    /** Number of indexed entries (including stale ones not yet evicted). */
    public int size() {
        return view.size();
    }

    /**
     * Asks the server for the bucket stream's last sequence (one JetStream API request, sent at
     * once, answered asynchronously): every registry write it acknowledged before this call is at
     * or before it. A bucket holding no message answers 0: the newest message is the last to
     * expire, so when it is gone no watch will ever deliver its sequence.
     */
    @Override
    public CompletableFuture<Long> position() {
        try {
            return nats.requestWithTimeout(STREAM_INFO_SUBJECT, null, settings.syncTimeout())
                    .thenApply(RegistryWatch::lastSequence);
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
    @Override
    public void awaitApplied(CompletableFuture<Long> position) throws CdcFailure, InterruptedException {
        long started = System.nanoTime();
        long deadline = started + settings.syncTimeout().toNanos();
        try {
            long target;
            try {
                target = position.get(settings.syncTimeout().toNanos(), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException e) {
                Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
                throw CdcFailure.retriable(
                        CdcReason.NATS_UNAVAILABLE, "cannot read the subscription registry's state: " + cause, cause);
            }
            synchronized (progress) {
                Loader first = current;
                long firstApplied = first == null ? -1 : first.applied;
                while (true) {
                    Loader live = current;
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
                                                + settings.syncTimeout().toMillis() + " ms",
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
        if (now - last < settings.syncTimeout().toNanos() || !lastForcedRewatch.compareAndSet(last, now)) {
            return;
        }
        log.warn(
                "[RegistryWatchStalled] subscription registry view stuck at sequence {}, bucket at {}: re-watching",
                applied,
                target);
        metrics.registryRewatchForced.increment();
        try {
            resync.execute(() -> safeRewatch(true));
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
        }
    }

    private void setCurrent(Loader loader) {
        synchronized (progress) {
            current = loader;
            progress.notifyAll();
        }
    }

    private void rewatchAfterReconnect(int attemptsLeft) {
        if (!safeRewatch(false) && attemptsLeft > 1 && !closed) {
            resync.schedule(() -> rewatchAfterReconnect(attemptsLeft - 1), 1, TimeUnit.SECONDS);
        }
    }

    private boolean safeRewatch(boolean keepView) {
        if (closed) {
            return true;
        }
        try {
            rewatch(keepView);
            return true;
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.warn("[RegistryWatchFailed] subscription registry re-watch failed (will retry): {}", e.toString());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Starts a fresh watch whose loader swaps its index in at end of data.
     *
     * @param keepView the periodic re-watch: the current view and its watch stay current (matching
     *     goes on, and awaits their live events) until the new one has loaded, and only then is
     *     the old watch closed. After a reconnect the old watch is dead: there is no current view
     *     until the new one loaded.
     */
    private synchronized void rewatch(boolean keepView)
            throws IOException, JetStreamApiException, InterruptedException {
        if (closed) {
            return;
        }
        // a restarted nats-server has lost the memory-storage bucket: re-create it, or the watch
        // fails until ws-front happens to re-create it
        KeyValue kv = KvBuckets.ensure(nats, settings.bucket());
        maxAge(KvBuckets.maxAge(nats, settings.bucket()));
        if (keepView && current != null) {
            if (retiring == null) {
                retiring = watch; // the current view's watch, closed once the new view is current
                watch = null;
            } else {
                stopWatching(); // an earlier re-watch that has not loaded yet: replaced
            }
        } else {
            closeRetiring();
            stopWatching();
            setCurrent(null); // the old view gets no more events: it is not current until the new one loaded
        }
        Loader loader = new Loader(new SubscriptionIndex(maxAge));
        loading = loader;
        watch = kv.watchAll(loader);
    }

    private synchronized void closeRetiring() {
        if (retiring != null) {
            try {
                retiring.close();
            } catch (Exception ignored) {
                // its subscription may already be gone with an old connection
            }
            retiring = null;
        }
    }

    private void stopWatching() {
        if (watch != null) {
            try {
                watch.close();
            } catch (Exception ignored) {
                // the old subscription may already be gone with the old connection
            }
            watch = null;
        }
    }

    /** Replays the bucket into {@code target}, swaps it in at end of data, then applies live events to it. */
    private final class Loader implements KeyValueWatcher {
        private final SubscriptionIndex target;
        private final Set<String> deletedWhileLoading = new HashSet<>();
        private boolean live;
        /** Stream sequence of the last event this loader applied (guarded by {@code progress} for waiters). */
        private volatile long applied;

        Loader(SubscriptionIndex target) {
            this.target = target;
        }

        @Override
        public void watch(KeyValueEntry e) {
            apply(e);
            if (live) {
                synchronized (progress) {
                    applied = e.getRevision();
                    progress.notifyAll();
                }
            } else {
                applied = e.getRevision();
            }
        }

        private void apply(KeyValueEntry e) {
            String key = e.getKey();
            if (e.getOperation() != KeyValueOperation.PUT) {
                target.remove(key);
                invalidKeys.remove(key);
                if (!live) {
                    deletedWhileLoading.add(key);
                }
                return;
            }
            SubscriptionEntry entry = null;
            String problem;
            byte[] value = e.getValue();
            if (value == null || value.length > SubscriptionEntry.MAX_BYTES) {
                problem = (value == null ? 0 : value.length) + " bytes (at most " + SubscriptionEntry.MAX_BYTES + ")";
            } else {
                try {
                    entry = mapper.readValue(value, SubscriptionEntry.class);
                    problem = entry.problem(key);
                } catch (IOException | RuntimeException bad) {
                    problem = "not a subscription entry: " + bad.getMessage();
                }
            }
            if (problem != null) {
                target.remove(key);
                rejected(key, problem);
                return;
            }
            invalidKeys.remove(key);
            long written = e.getCreated() == null
                    ? clock.millis()
                    : e.getCreated().toInstant().toEpochMilli();
            target.put(key, entry, written);
        }

        /**
         * Swaps the loaded snapshot in. Entries of the previous view that are absent from the
         * snapshot without a delete event are kept with their old write time, so they still
         * expire with the bucket's max age: after a nats-server restart the memory bucket comes
         * back empty, and until ws-front has re-put its bindings, dropping them would leave the
         * changes committed during the outage unmatched while the slot advances past them. A
         * binding whose delete was missed lingers at most the max age (its events reach no one).
         */
        @Override
        public void endOfData() {
            if (loading != this) {
                return; // replaced by a later re-watch before it loaded
            }
            int kept = target.keepFrom(view, deletedWhileLoading, clock.millis());
            view = target;
            live = true;
            setCurrent(this);
            loaded.countDown();
            try {
                resync.execute(RegistryWatch.this::closeRetiring);
            } catch (RejectedExecutionException stopping) {
                // closed meanwhile: close() closes it
            }
            log.debug(
                    "subscription registry loaded: {} entries up to sequence {} ({} kept from the previous view until re-put or max age)",
                    target.size(),
                    applied,
                    kept);
        }
    }

    /** Logs and counts an invalid entry once per key (a re-watch replays it). */
    private void rejected(String key, String problem) {
        if (invalidKeys.size() >= MAX_REMEMBERED_INVALID) {
            invalidKeys.clear();
        }
        if (invalidKeys.add(key)) {
            metrics.registryEntriesInvalid.increment();
            log.warn("[RegistryEntryInvalid] ignoring registry entry {}: {}", abbreviate(key), problem);
        }
    }

    private static String abbreviate(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        resync.shutdownNow();
        closeRetiring();
        stopWatching();
    }
}
