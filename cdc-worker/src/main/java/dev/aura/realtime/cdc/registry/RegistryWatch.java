package dev.aura.realtime.cdc.registry;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 * until its current content is loaded: a poll that ran before would find no subscriber for
 * changes that have some, and advance the slot past them. A full re-watch runs after every NATS
 * reconnect (ordered consumers are known not to resume reliably) and every resync period; it
 * replays the bucket into a fresh index and swaps it in at end of data, keeping entries of the
 * previous view that the new snapshot lacks until their max age (see {@link Loader#endOfData}).
 * After the swap, each KV event updates the index in place.
 *
 * <h2>Threads</h2>
 * jnats delivers watch events on its dispatcher thread and connection events on its connection
 * thread; re-watches run on {@code aura-subscription-resync}; the RLS shards read from any thread.
 */
public final class RegistryWatch implements SubscriptionRegistry, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RegistryWatch.class);
    /** After a reconnect, re-watch attempts one second apart before waiting for the next period. */
    private static final int REWATCH_ATTEMPTS = 60;

    /**
     * @param resyncPeriod period of the full re-watch
     * @param loadTimeout how long {@link #start()} waits for the first load
     * @param reputTimeout how long, after a reconnect, matching waits for replicas to re-put
     */
    public record Settings(Duration resyncPeriod, Duration loadTimeout, Duration reputTimeout) {}

    private final Connection nats;
    private final Clock clock;
    private final Settings settings;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ResyncGate gate;
    private final CountDownLatch loaded = new CountDownLatch(1);
    private final ScheduledExecutorService resync = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-subscription-resync").daemon().factory());
    private volatile SubscriptionIndex view = new SubscriptionIndex(SubscriptionEntry.MAX_AGE);
    private AutoCloseable watch; // guarded by this
    private volatile boolean closed;

    public RegistryWatch(Connection nats, Clock clock, Settings settings) {
        this.nats = nats;
        this.clock = clock;
        this.settings = settings;
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
        rewatch();
        if (!loaded.await(settings.loadTimeout().toMillis(), TimeUnit.MILLISECONDS)) {
            log.warn(
                    "[RegistryLoadTimeout] subscription registry not loaded within {} ms; continuing",
                    settings.loadTimeout().toMillis());
        }
        long period = settings.resyncPeriod().toMillis();
        synchronized (this) {
            if (!closed) {
                resync.scheduleWithFixedDelay(this::safeRewatch, period, period, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** Forwarded from the connection's listener: gate matching, and re-watch after a reconnect. */
    public void onConnectionEvent(ConnectionListener.Events event) {
        if (event == ConnectionListener.Events.DISCONNECTED) {
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

    private void rewatchAfterReconnect(int attemptsLeft) {
        if (!safeRewatch() && attemptsLeft > 1 && !closed) {
            resync.schedule(() -> rewatchAfterReconnect(attemptsLeft - 1), 1, TimeUnit.SECONDS);
        }
    }

    private boolean safeRewatch() {
        if (closed) {
            return true;
        }
        try {
            rewatch();
            return true;
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.warn("[RegistryWatchFailed] subscription registry re-watch failed (will retry): {}", e.toString());
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private synchronized void rewatch() throws IOException, JetStreamApiException, InterruptedException {
        if (closed) {
            return;
        }
        stopWatching();
        // a restarted nats-server has lost the memory-storage bucket: re-create it, or the watch
        // fails until ws-front happens to re-create it
        KeyValue kv = KvBuckets.ensure(nats, SubscriptionEntry.BUCKET, SubscriptionEntry.MAX_AGE);
        watch = kv.watchAll(new Loader(new SubscriptionIndex(SubscriptionEntry.MAX_AGE)));
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

        Loader(SubscriptionIndex target) {
            this.target = target;
        }

        @Override
        public void watch(KeyValueEntry e) {
            if (e.getOperation() != KeyValueOperation.PUT) {
                target.remove(e.getKey());
                if (!live) {
                    deletedWhileLoading.add(e.getKey());
                }
                return;
            }
            try {
                SubscriptionEntry entry = mapper.readValue(e.getValue(), SubscriptionEntry.class);
                long written = e.getCreated() == null
                        ? clock.millis()
                        : e.getCreated().toInstant().toEpochMilli();
                target.put(e.getKey(), entry, written);
            } catch (IOException | RuntimeException bad) {
                log.warn("[RegistryEntryInvalid] ignoring malformed registry entry {}: {}", e.getKey(), bad.toString());
                target.remove(e.getKey());
            }
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
            int kept = target.keepFrom(view, deletedWhileLoading, clock.millis());
            view = target;
            live = true;
            loaded.countDown();
            log.debug(
                    "subscription registry loaded: {} entries ({} kept from the previous view until re-put or max age)",
                    target.size(),
                    kept);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        resync.shutdownNow();
        stopWatching();
    }
}
