package dev.aura.realtime.front.presence;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.front.config.PresenceConfig;
import dev.aura.realtime.front.log.LogCode;
import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The presence view thread ({@code aura-presence-view}): applies watched bucket changes to the
 * {@link PresenceView}, keeps the local listeners (channels that enabled presence) and sends
 * them {@code presence_state} and {@code presence_diff}.
 *
 * <p>Ordering: a listener's {@code presence_state} is taken on this thread after flushing every
 * pending diff to the existing listeners, and diffs are sent from this thread too, so a listener
 * sees exactly the changes after its state, in order (Netty keeps the order of writes from one
 * thread). Changes are batched for {@link PresenceConfig#BATCH_WINDOW}: one diff per channel.
 *
 * <p>Watch generations: each (re-)watch gets a new generation; events of older watches still
 * queued here are dropped, so a replaced watch cannot replay stale revisions.
 */
final class PresenceFeed implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PresenceFeed.class);

    private final Clock clock;
    private final Duration maxAge;
    private final ScheduledExecutorService thread;
    private final PresenceView view = new PresenceView();
    private final Map<PresenceView.Channel, Set<PresenceMember>> listeners = new HashMap<>();
    private final AtomicLong generation = new AtomicLong();
    private boolean flushScheduled;

    PresenceFeed(Clock clock, Duration maxAge) {
        this.clock = clock;
        this.maxAge = maxAge;
        this.thread = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("aura-presence-view").daemon().factory());
    }

    /** A channel enabled presence: send pending diffs to the others, then its state. Any thread. */
    void listen(PresenceMember m) {
        run(() -> {
            flush();
            if (!m.active()) {
                return;
            }
            PresenceView.Channel c = channel(m);
            listeners.computeIfAbsent(c, k -> new LinkedHashSet<>()).add(m);
            m.push("presence_state", view.state(c));
        });
    }

    /** The channel left or closed. Any thread. */
    void unlisten(PresenceMember m) {
        run(() -> {
            PresenceView.Channel c = channel(m);
            Set<PresenceMember> set = listeners.get(c);
            if (set != null && set.remove(m) && set.isEmpty()) {
                listeners.remove(c);
            }
        });
    }

    /** Starts a new watch generation; events of earlier ones are ignored from now on. */
    long newGeneration() {
        return generation.incrementAndGet();
    }

    void applyPut(long gen, String kvKey, PresenceEntry entry) {
        run(() -> {
            if (gen == generation.get()) {
                view.put(kvKey, entry, clock.millis());
                scheduleFlush();
            }
        });
    }

    void applyDelete(long gen, String kvKey) {
        run(() -> {
            if (gen == generation.get()) {
                view.remove(kvKey);
                scheduleFlush();
            }
        });
    }

    /**
     * The bucket's keys, listed from {@code listedAtMs}: entries missing from it and unseen for
     * the max age expired silently (nats-server 2.9 sends watchers nothing on expiry).
     */
    void reconcile(Set<String> listed, long listedAtMs) {
        run(() -> {
            int dropped = view.reconcile(listed, listedAtMs - maxAge.toMillis());
            if (dropped > 0) {
                log.info("presence reconciliation: {} expired presences left", dropped);
                scheduleFlush();
            }
        });
    }

    private void scheduleFlush() {
        if (!flushScheduled && view.hasPendingDiffs()) {
            flushScheduled = true;
            thread.schedule(this::flush, PresenceConfig.BATCH_WINDOW.toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    private void flush() {
        flushScheduled = false;
        for (Map.Entry<PresenceView.Channel, ObjectNode> d : view.drainDiffs().entrySet()) {
            for (PresenceMember m : listeners.getOrDefault(d.getKey(), Set.of())) {
                if (m.active()) {
                    m.push("presence_diff", d.getValue());
                }
            }
        }
    }

    private void run(Runnable task) {
        try {
            thread.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LogCode.PresenceViewFailed.warn(log, "{}", e.toString(), e);
                }
            });
        } catch (RejectedExecutionException closed) {
            log.debug("presence view closed; task dropped");
        }
    }

    private static PresenceView.Channel channel(PresenceMember m) {
        return new PresenceView.Channel(m.projectId(), m.channelKey());
    }

    /** Stops the thread; pending diffs are dropped (their channels are closing too). Idempotent. */
    @Override
    public void close() {
        thread.shutdownNow();
    }
}
