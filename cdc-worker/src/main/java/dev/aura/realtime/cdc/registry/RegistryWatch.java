package dev.aura.realtime.cdc.registry;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cdc-worker's view of the subscription registry (docs/design.md C8): watches the JetStream
 * KV bucket {@link SubscriptionEntry#BUCKET} (jnats' public API only) into a
 * {@link SubscriptionIndex}, and holds matching back with a {@link ResyncGate} after a NATS
 * reconnect. Its other jobs have classes of their own: no entry is trusted ({@link EntryTrust}),
 * and a batch is matched only once the view holds every acknowledged write ({@link ReadYourWrites}).
 *
 * <h2>Lifecycle</h2>
 * {@link #start()} creates the bucket if needed, watches it and waits (at most the load timeout)
 * until its current content is loaded. A full re-watch runs after every NATS reconnect (ordered
 * consumers are known not to resume reliably) and every resync period; its {@link RegistryLoader}
 * replays the bucket into a fresh index, which is swapped in at end of data, keeping entries of
 * the previous view that the new snapshot lacks until their max age (see {@link #loaded}). After
 * the swap, each KV event updates the index in place. During the periodic re-watch the previous
 * view and its watch stay current until the new one has loaded; after a reconnect there is no
 * current view until then.
 *
 * <h2>Threads</h2>
 * jnats delivers watch events on its dispatcher thread and connection events on its connection
 * thread; re-watches run on {@code aura-subscription-resync}; the RLS shards read from any thread
 * and the poll loop calls {@link #awaitCurrent}.
 */
public final class RegistryWatch implements SubscriptionRegistry, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RegistryWatch.class);

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

    /** After a reconnect, re-watch attempts one second apart before waiting for the next period. */
    private static final int REWATCH_ATTEMPTS = 60;

    private final Connection nats;
    private final Clock clock;
    private final Settings settings;
    private final ResyncGate gate;
    private final ReadYourWrites reads;
    private final RegistryLoader.Shared loaders;
    private final CountDownLatch loaded = new CountDownLatch(1);
    private final ScheduledExecutorService resync = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-subscription-resync").daemon().factory());
    private volatile SubscriptionIndex view = new SubscriptionIndex(SubscriptionEntry.MAX_AGE);
    /** The bucket's max age as last read or set ({@link #maxAge(Duration)}); every index ignores entries older. */
    private volatile Duration maxAge = SubscriptionEntry.MAX_AGE;

    private AutoCloseable watch; // guarded by this
    /** During a periodic re-watch: the watch of the still-current view, closed once the new one loaded. */
    private AutoCloseable retiring; // guarded by this
    /** The loader of {@link #watch}; a loader that is no longer it never becomes current. */
    private volatile RegistryLoader loading;

    private volatile boolean closed;

    public RegistryWatch(Connection nats, Clock clock, Settings settings, CdcMetrics metrics) throws IOException {
        this.nats = nats;
        this.clock = clock;
        this.settings = settings;
        this.gate = new ResyncGate(clock, settings.reputTimeout());
        this.reads = new ReadYourWrites(nats, settings.syncTimeout(), metrics, this::rewatchNow);
        this.loaders = new RegistryLoader.Shared(new EntryTrust(metrics), reads, clock, this::loaded);
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

    /**
     * The registry bucket's max age is now {@code age} ({@link RegistryMaxAge}, or as read at a
     * re-watch): the view and every later index keep entries that long after their last write.
     */
    public void maxAge(Duration age) {
        maxAge = age;
        view.maxAge(age);
        RegistryLoader l = loading;
        if (l != null) {
            l.index().maxAge(age);
        }
    }

    /** Forwarded from the connection's listener: gate matching, and re-watch after a reconnect. */
    public void onConnectionEvent(ConnectionListener.Events event) {
        if (event == ConnectionListener.Events.DISCONNECTED) {
            // the server may come back without the memory bucket, with sequences starting over:
            // the current view proves nothing until the re-watch after the reconnect has loaded
            reads.current(null);
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

    /** Number of indexed entries (including stale ones not yet evicted). */
    public int size() {
        return view.size();
    }

    /** Where the bucket stands now ({@link ReadYourWrites#position}). */
    @Override
    public CompletableFuture<Long> position() {
        return reads.position();
    }

    /**
     * Returns once the live watch has applied {@code position} ({@link ReadYourWrites#awaitApplied}).
     *
     * @throws CdcFailure ({@code nats_unavailable}) when the position cannot be read or the view
     *     does not catch up within the sync timeout; the batch must not be matched
     */
    @Override
    public void awaitApplied(CompletableFuture<Long> position) throws CdcFailure, InterruptedException {
        reads.awaitApplied(position);
    }

    /** A re-watch now, keeping the view until the new one loaded (a stalled watch). */
    private void rewatchNow() {
        try {
            resync.execute(() -> safeRewatch(true));
        } catch (RejectedExecutionException closing) {
            // closed meanwhile
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
        if (keepView && reads.current() != null) {
            if (retiring == null) {
                retiring = watch; // the current view's watch, closed once the new view is current
                watch = null;
            } else {
                stopWatching(); // an earlier re-watch that has not loaded yet: replaced
            }
        } else {
            closeRetiring();
            stopWatching();
            reads.current(null); // the old view gets no more events: it is not current until the new one loaded
        }
        RegistryLoader loader = new RegistryLoader(new SubscriptionIndex(maxAge), loaders);
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

    /**
     * Swaps a loaded snapshot in, unless a later re-watch replaced its loader. Entries of the
     * previous view that are absent from the snapshot without a delete event are kept with their
     * old write time, so they still expire with the bucket's max age: after a nats-server restart
     * the memory bucket comes back empty, and until ws-front has re-put its bindings, dropping them
     * would leave the changes committed during the outage unmatched while the slot advances past
     * them. A binding whose delete was missed lingers at most the max age (its events reach no one).
     */
    private void loaded(RegistryLoader loader) {
        if (loading != loader) {
            return; // replaced by a later re-watch before it loaded
        }
        SubscriptionIndex target = loader.index();
        int[] kept = new int[1];
        reads.current(loader, () -> {
            kept[0] = target.keepFrom(view, loader.deletedWhileLoading(), clock.millis());
            view = target;
            loader.goLive();
        });
        loaded.countDown();
        try {
            resync.execute(this::closeRetiring);
        } catch (RejectedExecutionException stopping) {
            // closed meanwhile: close() closes it
        }
        log.debug(
                "subscription registry loaded: {} entries up to sequence {} ({} kept from the previous view until re-put or max age)",
                target.size(),
                loader.applied,
                kept[0]);
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
