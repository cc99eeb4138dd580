package dev.aura.realtime.cdc.registry;

import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import io.nats.client.Connection;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the registry bucket's max age at {@link SubscriptionEntry#maxAgeFor} the longest resume
 * window in force (issue 38, docs/design.md R): a parked entry must stay in the bucket for its
 * project's window, and so must the entries of a replica killed right before its next refresh.
 * nats-server 2.9 has no per-key TTL, so the bucket's one max age follows the longest window (at
 * least {@link SubscriptionEntry#MAX_AGE}); ws-front caps every window at what the max age in force
 * holds ({@link SubscriptionEntry#longestWindowWithin}). Every replica runs it (idempotent).
 *
 * <p>Threads: one scheduler thread.
 */
public final class RegistryMaxAge implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RegistryMaxAge.class);

    private final Connection nats;
    private final KvBuckets.Spec bucket;
    private final Callable<Integer> longestWindow;
    private final RegistryWatch watch;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            Thread.ofPlatform().name("aura-registry-max-age").daemon().factory());
    private volatile Duration current = SubscriptionEntry.MAX_AGE;

    /**
     * @param longestWindow the longest resume window in force, in seconds (a platform read)
     * @param watch told the max age, so its index keeps entries exactly as long as the bucket
     */
    public RegistryMaxAge(
            Connection nats, KvBuckets.Spec bucket, Callable<Integer> longestWindow, RegistryWatch watch) {
        this.nats = nats;
        this.bucket = bucket;
        this.longestWindow = longestWindow;
        this.watch = watch;
    }

    /** Syncs once now (blocking), then every {@code period}. */
    public void start(Duration period) {
        syncNow();
        long ms = period.toMillis();
        timer.scheduleWithFixedDelay(this::syncNow, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** One pass; a failure is logged and retried at the next. */
    public void syncNow() {
        try {
            Duration wanted = SubscriptionEntry.maxAgeFor(longestWindow.call());
            Duration before = KvBuckets.maxAge(nats, bucket);
            // longer first in the index, shorter last: it never drops an entry the bucket still holds
            watch.maxAge(wanted.compareTo(before) > 0 ? wanted : before);
            KvBuckets.setMaxAge(nats, bucket, wanted);
            watch.maxAge(wanted);
            current = wanted;
        } catch (Exception e) {
            log.warn("[{}] registry bucket max age not updated: {}", LogCode.REGISTRY_MAX_AGE_FAILED, e.toString());
        }
    }

    /** The max age last set. */
    public Duration current() {
        return current;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
