package dev.aura.realtime.front.presence;

import dev.aura.realtime.front.config.PresenceConfig;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.relay.KvThread;
import io.nats.client.api.KeyValueEntry;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The presence KV thread ({@code aura-presence-kv}): every blocking bucket call happens here, in
 * submission order, so a track's put and the untrack's delete of the same key never swap.
 *
 * <p>Periodic work: every {@link PresenceConfig#refreshInterval()} (a quarter of the max age) it
 * re-puts the presences this replica owns; every {@code PRESENCE_RECONCILE_MS} it lists the
 * bucket's keys for {@link PresenceFeed#reconcile}. Watch events arrive on jnats' dispatcher
 * thread, are decoded there and handed to the feed.
 */
final class PresenceKv implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PresenceKv.class);

    private final PresenceBucket bucket;
    private final PresenceFeed feed;
    private final Clock clock;
    private final Map<String, PresenceEntry> own = new ConcurrentHashMap<>();
    private final KvThread thread;
    private NatsKeyValueWatchSubscription watch;
    private int failures;

    PresenceKv(PresenceBucket bucket, PresenceFeed feed, PresenceConfig config, Clock clock) {
        this.bucket = bucket;
        this.feed = feed;
        this.clock = clock;
        this.thread = new KvThread("aura-presence-kv", LogCode.PresenceCloseTimeout);
        thread.every(config.refreshInterval(), this::refreshAll);
        thread.every(config.reconcileInterval(), this::reconcile);
    }

    /** Creates the bucket when absent and starts the watch; blocks until done. */
    void start() throws Exception {
        try {
            thread.submit(() -> {
                        bucket.ensure();
                        rewatch();
                        return null;
                    })
                    .get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof Exception cause ? cause : e;
        }
    }

    /** Puts an owned presence (replacing the member's previous one under the same key). Any thread. */
    void put(PresenceEntry entry) {
        own.put(entry.kvKey(), entry);
        run(() -> write(entry));
    }

    /** Deletes an owned presence at once. Any thread. */
    void delete(String kvKey) {
        if (own.remove(kvKey) == null) {
            return;
        }
        run(() -> {
            try {
                bucket.delete(kvKey);
            } catch (Exception e) {
                LogCode.PresenceDeleteFailed.warn(
                        log, "{}: {} (expires with the bucket's max age)", kvKey, e.toString());
            }
        });
    }

    /**
     * After a NATS reconnect: the bucket may be gone (memory storage); re-create, re-put,
     * re-watch. JetStream may answer only a moment after the connection is back, so a failed
     * attempt is retried every second, at most {@link #RESYNC_ATTEMPTS} times (as the registry
     * does); the periodic refresh keeps re-putting after that.
     */
    void resync() {
        resync(RESYNC_ATTEMPTS);
    }

    private static final int RESYNC_ATTEMPTS = 30;

    private void resync(int attemptsLeft) {
        run(() -> {
            boolean done = true;
            try {
                bucket.ensure();
            } catch (Exception e) {
                done = false;
                LogCode.PresenceResyncFailed.warn(log, "bucket: {}", e.toString());
            }
            refreshAll();
            try {
                rewatch();
            } catch (Exception e) {
                done = false;
                LogCode.PresenceResyncFailed.warn(log, "watch: {}", e.toString());
            }
            if (!done && attemptsLeft > 1) {
                thread.schedule(() -> resync(attemptsLeft - 1), Duration.ofSeconds(1));
            }
        });
    }

    private void write(PresenceEntry entry) {
        if (own.get(entry.kvKey()) != entry) {
            return; // replaced or untracked before its turn
        }
        try {
            bucket.put(entry);
            failures = 0;
        } catch (Exception e) {
            if (failures++ == 0) {
                LogCode.PresencePutFailed.warn(
                        log, "{}: {} (re-put on refresh and after reconnect)", entry.kvKey(), e.toString());
            }
        }
    }

    private void refreshAll() {
        own.values().forEach(this::write);
    }

    private void reconcile() {
        long listedAt = clock.millis();
        try {
            feed.reconcile(Set.copyOf(bucket.keys()), listedAt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            log.debug("presence reconciliation skipped: {}", e.toString());
        }
    }

    private void rewatch() throws Exception {
        long gen = feed.newGeneration();
        if (watch != null) {
            watch.unsubscribe();
        }
        watch = bucket.watch(new Watcher(gen));
    }

    private void run(Runnable task) {
        try {
            thread.execute(task);
        } catch (RejectedExecutionException closed) {
            log.debug("presence KV thread closed; task dropped");
        }
    }

    /** Lets queued writes and deletes finish (bounded, {@link KvThread#CLOSE_WAIT}), then stops the watch. Idempotent. */
    @Override
    public void close() {
        thread.close();
        if (watch != null) {
            try {
                watch.unsubscribe();
            } catch (RuntimeException e) {
                log.debug("presence watch unsubscribe failed: {}", e.toString());
            }
        }
    }

    /** Decodes watch events (jnats dispatcher thread) and hands them to the feed. */
    private final class Watcher implements KeyValueWatcher {
        private final long gen;

        Watcher(long gen) {
            this.gen = gen;
        }

        @Override
        public void watch(KeyValueEntry e) {
            switch (e.getOperation()) {
                case PUT -> {
                    try {
                        feed.applyPut(gen, e.getKey(), bucket.decode(e.getValue()));
                    } catch (Exception ex) {
                        LogCode.PresenceEntryInvalid.warn(log, "{}: {}", e.getKey(), ex.toString());
                    }
                }
                case DELETE, PURGE -> feed.applyDelete(gen, e.getKey());
            }
        }

        @Override
        public void endOfData() {
            log.debug("presence watch {} caught up", gen);
        }
    }
}
