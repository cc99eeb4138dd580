package dev.aura.realtime.cdc.match;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueOperation;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.api.StorageType;
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
 * so deletes missed while disconnected disappear. Entries not refreshed within the bucket's max
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
    private volatile boolean closed;

    /** An entry and when it was last written (epoch ms, from the KV entry's timestamp). */
    record Stored(SubscriptionEntry entry, long writtenAtMs) {}

    public SubscriptionIndex(Connection nats, Clock clock) {
        this.nats = nats;
        this.clock = clock;
    }

    /** Creates the bucket if needed and starts watching; re-watches on reconnect. */
    public void start(long resyncPeriodMs) throws IOException, JetStreamApiException, InterruptedException {
        ensureBucket(nats);
        rewatch();
        resync.scheduleWithFixedDelay(this::safeRewatch, resyncPeriodMs, resyncPeriodMs, TimeUnit.MILLISECONDS);
    }

    /** Forwarded from the connection's listener: re-watch after a reconnect. */
    public void onConnectionEvent(ConnectionListener.Events event) {
        if (event == ConnectionListener.Events.RECONNECTED || event == ConnectionListener.Events.RESUBSCRIBED) {
            resync.execute(this::safeRewatch);
        }
    }

    /** Creates {@link SubscriptionEntry#BUCKET} (memory storage, max age) unless it exists. */
    public static void ensureBucket(Connection nats) throws IOException, JetStreamApiException {
        var kvm = nats.keyValueManagement();
        try {
            kvm.getStatus(SubscriptionEntry.BUCKET);
        } catch (JetStreamApiException notFound) {
            try {
                kvm.create(KeyValueConfiguration.builder()
                        .name(SubscriptionEntry.BUCKET)
                        .storageType(StorageType.Memory)
                        .ttl(SubscriptionEntry.MAX_AGE)
                        .maxHistoryPerKey(1)
                        .build());
            } catch (JetStreamApiException raced) {
                kvm.getStatus(SubscriptionEntry.BUCKET); // created by someone else meanwhile
            }
        }
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

    /** Number of indexed entries (including stale ones not yet evicted). */
    public int size() {
        return byKey.size();
    }

    private void safeRewatch() {
        if (closed) {
            return;
        }
        try {
            rewatch();
        } catch (Exception e) {
            log.warn("subscription registry re-watch failed (will retry): {}", e.toString());
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
        Map<String, Stored> staging = new ConcurrentHashMap<>();
        KeyValue kv = nats.keyValue(SubscriptionEntry.BUCKET);
        watch = kv.watchAll(new Watcher(staging));
    }

    private final class Watcher implements KeyValueWatcher {
        private final Map<String, Stored> target;
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
                    long written = e.getCreated() == null ? clock.millis() : e.getCreated().toInstant().toEpochMilli();
                    map.put(e.getKey(), new Stored(entry, written));
                } catch (IOException | RuntimeException bad) {
                    log.warn("ignoring malformed registry entry {}: {}", e.getKey(), bad.toString());
                    map.remove(e.getKey());
                }
            } else {
                map.remove(e.getKey());
            }
            if (live) {
                reindex();
            }
        }

        @Override
        public void endOfData() {
            byKey = target;
            live = true;
            reindex();
            log.debug("subscription registry loaded: {} entries", target.size());
        }
    }

    private synchronized void reindex() {
        Map<String, List<Stored>> next = new HashMap<>();
        for (Stored s : byKey.values()) {
            next.computeIfAbsent(s.entry.projectId() + "\u0000" + s.entry.table(), k -> new ArrayList<>()).add(s);
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
