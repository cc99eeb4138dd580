package dev.aura.realtime.cdc.match;

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
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cdc-worker's view of the subscription registry (PRODUCT.md C8): watches the JetStream KV
 * bucket {@link SubscriptionEntry#BUCKET} and keeps an index by (project, table).
 *
 * <p>Threads: jnats delivers watch events on its dispatcher thread; readers (RLS shards) call
 * {@link #candidates} from any thread and see immutable lists. A full re-watch runs after every
 * NATS reconnect (ordered consumers are known not to resume reliably) and every
 * {@code resyncPeriod}; it replays the bucket into a fresh index and swaps it in at end of data,
 * keeping entries of the previous view that the new snapshot lacks until their max age (see
 * {@link Watcher#endOfData}). Entries not refreshed within the bucket's max
 * age are ignored even without a delete event: on nats-server 2.9, expiry by max age produces no
 * watch event.
 */
public final class SubscriptionIndex implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionIndex.class);
    private static final String ANY_TABLE = "*";

    private final Connection nats;
    private final Clock clock;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ScheduledExecutorService resync = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-subscription-resync").daemon().factory());
    private volatile Map<String, Stored> byKey = new ConcurrentHashMap<>();
    private volatile Map<String, List<Stored>> byTable = Map.of();
    private NatsKeyValueWatchSubscription watch;
    /**
     * KV write times come from the server's clock. No allowance for skew: a server clock behind
     * ours only makes the worker wait longer (up to the timeout), never publish too early.
     */
    private static final long CLOCK_SKEW_MS = 0;

    private final long resyncTimeoutMs = 10_000;
    private volatile long resyncSinceMs;
    private volatile long resyncDeadlineMs = Long.MAX_VALUE;
    private volatile java.util.Set<String> awaitedOwners = java.util.Set.of();
    private final java.util.concurrent.CountDownLatch loaded = new java.util.concurrent.CountDownLatch(1);
    private volatile boolean closed;

    /** An entry and when it was last written (epoch ms, from the KV entry's timestamp). */
    record Stored(SubscriptionEntry entry, long writtenAtMs) {}

    public SubscriptionIndex(Connection nats, Clock clock) {
        this.nats = nats;
        this.clock = clock;
    }

    /**
     * Creates the bucket if needed, starts watching, and waits (at most {@code loadTimeout}) until
     * the bucket's current content is loaded: a poll that ran before would find no subscriber for
     * changes that have some, and advance the slot past them. Re-watches on reconnect.
     */
    public void start(long resyncPeriodMs, java.time.Duration loadTimeout)
            throws IOException, JetStreamApiException, InterruptedException {
        rewatch();
        if (!loaded.await(loadTimeout.toMillis(), TimeUnit.MILLISECONDS)) {
            log.warn("subscription registry not loaded within {} ms; continuing", loadTimeout.toMillis());
        }
        resync.scheduleWithFixedDelay(this::safeRewatch, resyncPeriodMs, resyncPeriodMs, TimeUnit.MILLISECONDS);
    }

    /** Creates the bucket if needed and starts watching; re-watches on reconnect. */
    public void start(long resyncPeriodMs) throws IOException, JetStreamApiException, InterruptedException {
        start(resyncPeriodMs, java.time.Duration.ofSeconds(10));
    }

    /** Forwarded from the connection's listener: re-watch after a reconnect (retried each second until it works). */
    public void onConnectionEvent(ConnectionListener.Events event) {
        if (event == ConnectionListener.Events.DISCONNECTED && awaitedOwners.isEmpty()) {
            beginResync();
        } else if (event == ConnectionListener.Events.RECONNECTED) {
            resyncDeadlineMs = clock.millis() + resyncTimeoutMs;
        }
        if (event == ConnectionListener.Events.RECONNECTED || event == ConnectionListener.Events.RESUBSCRIBED) {
            resync.execute(() -> rewatchAfterReconnect(REWATCH_ATTEMPTS));
        }
    }

    private static final int REWATCH_ATTEMPTS = 60;

    private void rewatchAfterReconnect(int attemptsLeft) {
        if (!safeRewatch() && attemptsLeft > 1 && !closed) {
            resync.schedule(() -> rewatchAfterReconnect(attemptsLeft - 1), 1, TimeUnit.SECONDS);
        }
    }

    /** Creates {@link SubscriptionEntry#BUCKET} (memory storage, max age) unless it exists. */
    public static void ensureBucket(Connection nats) throws IOException, JetStreamApiException {
        KvBuckets.ensure(nats, SubscriptionEntry.BUCKET, SubscriptionEntry.MAX_AGE);
    }

    /**
     * The live entries for a change of {@code table} in {@code projectId}, including entries for
     * every table ({@code *}). Never null.
     */
    public List<SubscriptionEntry> candidates(String projectId, String table) {
        List<Stored> exact = byTable.getOrDefault(projectId + "\u0000" + table, List.of());
        List<Stored> any = byTable.getOrDefault(projectId + "\u0000" + ANY_TABLE, List.of());
        if (exact.isEmpty() && any.isEmpty()) {
            return List.of();
        }
        long now = clock.millis();
        long oldest = now - SubscriptionEntry.MAX_AGE.toMillis();
        List<SubscriptionEntry> out = new ArrayList<>(exact.size() + any.size());
        for (List<Stored> list : List.of(exact, any)) {
            for (Stored s : list) {
                if (s.writtenAtMs >= oldest && s.entry.expiresAtMs() > now) {
                    out.add(s.entry);
                }
            }
        }
        return out;
    }

    /**
     * After a NATS reconnect, the ws-front replicas that owned bindings must re-put them (the
     * bucket may have been lost with a restarted server) before changes are matched again: a
     * replica re-puts only after its own connection, and with it its subscription to the change
     * subjects, is back, so until then a published change would reach no one while the slot
     * advances past it. Records, at the disconnect, the replicas to wait for: any write of theirs
     * after that moment proves they are connected again (or never lost their connection).
     */
    synchronized void beginResync() {
        java.util.Set<String> owners = new java.util.HashSet<>();
        long oldest = clock.millis() - SubscriptionEntry.MAX_AGE.toMillis();
        for (Stored s : byKey.values()) {
            if (s.writtenAtMs >= oldest && s.entry.instance() != null) {
                owners.add(s.entry.instance());
            }
        }
        resyncSinceMs = clock.millis();
        resyncDeadlineMs = Long.MAX_VALUE; // counted from the reconnect
        awaitedOwners = owners;
        if (!owners.isEmpty()) {
            log.info(
                    "NATS disconnected: after the reconnect, change matching waits until {} replica(s) re-put their bindings "
                            + "(at most {} ms): {}",
                    owners.size(),
                    resyncTimeoutMs,
                    owners);
        }
    }

    /**
     * False from a NATS disconnect until every replica that owned bindings then has re-put one of
     * them, or {@code resyncTimeoutMs} passed after the reconnect (a replica that died meanwhile never will; its
     * bindings expire with the max age). The pipeline fails such a batch, so the slot is not
     * advanced and the batch is re-read once the registry is whole again.
     */
    public boolean synchronised() {
        java.util.Set<String> owners = awaitedOwners;
        if (owners.isEmpty()) {
            return true;
        }
        long since = resyncSinceMs;
        if (clock.millis() > resyncDeadlineMs) {
            log.warn(
                    "replicas {} did not re-put their bindings within {} ms of the NATS reconnect; matching without them",
                    missingOwners(owners, since),
                    resyncTimeoutMs);
            awaitedOwners = java.util.Set.of();
            return true;
        }
        if (missingOwners(owners, since).isEmpty()) {
            awaitedOwners = java.util.Set.of();
            log.info("subscription registry re-synchronised {} ms after the NATS disconnect", clock.millis() - since);
            return true;
        }
        return false;
    }

    /** Replicas still awaited (for status messages). */
    public java.util.Set<String> awaitedReplicas() {
        java.util.Set<String> owners = awaitedOwners;
        return owners.isEmpty() ? owners : missingOwners(owners, resyncSinceMs);
    }

    private java.util.Set<String> missingOwners(java.util.Set<String> owners, long since) {
        java.util.Set<String> missing = new java.util.HashSet<>(owners);
        for (Stored s : byKey.values()) {
            if (s.writtenAtMs >= since - CLOCK_SKEW_MS) {
                missing.remove(s.entry.instance());
            }
        }
        return missing;
    }

    /** Number of indexed entries (including stale ones not yet evicted). */
    public int size() {
        return byKey.size();
    }

    private boolean safeRewatch() {
        if (closed) {
            return true;
        }
        try {
            rewatch();
            return true;
        } catch (Exception e) {
            log.warn("subscription registry re-watch failed (will retry): {}", e.toString());
            return false;
        }
    }

    private synchronized void rewatch() throws IOException, JetStreamApiException, InterruptedException {
        if (closed) {
            return;
        }
        if (watch != null) {
            try {
                watch.unsubscribe();
            } catch (RuntimeException ignored) {
                // the old subscription may already be gone with the old connection
            }
        }
        // a restarted nats-server has lost the memory-storage bucket: re-create it, or the watch
        // fails until ws-front happens to re-create it
        ensureBucket(nats);
        Map<String, Stored> staging = new ConcurrentHashMap<>();
        KeyValue kv = nats.keyValue(SubscriptionEntry.BUCKET);
        watch = kv.watchAll(new Watcher(staging));
    }

    private final class Watcher implements KeyValueWatcher {
        private final Map<String, Stored> target;
        private final java.util.Set<String> deletedWhileLoading = new java.util.HashSet<>();
        private boolean live;

        Watcher(Map<String, Stored> staging) {
            this.target = staging;
        }

        @Override
        public void watch(KeyValueEntry e) {
            Map<String, Stored> map = live ? byKey : target;
            if (e.getOperation() == KeyValueOperation.PUT) {
                try {
                    SubscriptionEntry entry = mapper.readValue(e.getValue(), SubscriptionEntry.class);
                    long written = e.getCreated() == null
                            ? clock.millis()
                            : e.getCreated().toInstant().toEpochMilli();
                    map.put(e.getKey(), new Stored(entry, written));
                } catch (IOException | RuntimeException bad) {
                    log.warn("ignoring malformed registry entry {}: {}", e.getKey(), bad.toString());
                    map.remove(e.getKey());
                }
            } else {
                map.remove(e.getKey());
                if (!live) {
                    deletedWhileLoading.add(e.getKey());
                }
            }
            if (live) {
                reindex();
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
            long oldest = clock.millis() - SubscriptionEntry.MAX_AGE.toMillis();
            int kept = 0;
            for (Map.Entry<String, Stored> previous : byKey.entrySet()) {
                String key = previous.getKey();
                if (!target.containsKey(key)
                        && !deletedWhileLoading.contains(key)
                        && previous.getValue().writtenAtMs >= oldest) {
                    target.put(key, previous.getValue());
                    kept++;
                }
            }
            byKey = target;
            live = true;
            reindex();
            loaded.countDown();
            log.debug(
                    "subscription registry loaded: {} entries ({} kept from the previous view until re-put or max age)",
                    target.size(),
                    kept);
        }
    }

    private synchronized void reindex() {
        Map<String, List<Stored>> next = new HashMap<>();
        for (Stored s : byKey.values()) {
            next.computeIfAbsent(s.entry.projectId() + "\u0000" + s.entry.table(), k -> new ArrayList<>())
                    .add(s);
        }
        next.replaceAll((k, v) -> List.copyOf(v));
        byTable = Map.copyOf(next);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        resync.shutdownNow();
        if (watch != null) {
            try {
                watch.unsubscribe();
            } catch (RuntimeException ignored) {
                // connection already closed
            }
        }
    }
}
