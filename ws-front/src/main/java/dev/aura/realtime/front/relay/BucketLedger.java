package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.KvBuckets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The bytes this replica's entries occupy in one JetStream KV bucket, per project
 * (docs/design.md D8): each live entry at {@link KvBuckets#storedBytes}, and each entry deleted
 * within the bucket's max age at {@link KvBuckets#markerBytes} (a delete leaves a marker that the
 * server keeps, and charges, until the max age drops it). The replicas share their totals in the
 * usage report, so a project's bytes across the cluster are {@code bytes(project)} plus the others'
 * last reports; {@link #charge} refuses what would put the project over its share.
 *
 * <p>Thread-safe: a project's share is only read and changed inside {@link ConcurrentHashMap#compute}.
 */
public final class BucketLedger implements BucketUsage {
    /** A project's share of the bucket and what the other replicas reported of it. */
    public interface Shares {
        /** The bytes the project may hold in the bucket across replicas. */
        long share(String projectId);

        /** The bytes the other replicas last reported for the project. */
        long elsewhere(String projectId);
    }

    private record Marker(long expiresAtMs, long bytes) {}

    private static final class Share {
        final Map<String, Long> live = new HashMap<>();
        final ArrayDeque<Marker> markers = new ArrayDeque<>();
        long total;

        void expire(long nowMs) {
            while (!markers.isEmpty() && markers.peekFirst().expiresAtMs() <= nowMs) {
                total -= markers.pollFirst().bytes();
            }
        }

        boolean empty() {
            return live.isEmpty() && markers.isEmpty();
        }
    }

    private final String bucket;
    private final Supplier<Duration> markerLife;
    private final Clock clock;
    private final Map<String, Share> shares = new ConcurrentHashMap<>();

    /**
     * @param bucket the bucket's name (part of every stored subject)
     * @param markerLife the bucket's max age: how long a delete marker stays
     */
    public BucketLedger(String bucket, Duration markerLife, Clock clock) {
        this(bucket, () -> markerLife, clock);
    }

    /**
     * @param markerLife the bucket's max age in force (the registry's follows the longest resume
     *     window, docs/design.md R): how long a delete marker stays
     */
    public BucketLedger(String bucket, Supplier<Duration> markerLife, Clock clock) {
        this.bucket = bucket;
        this.markerLife = markerLife;
        this.clock = clock;
    }

    /** What a value of {@code valueBytes} under {@code key} occupies in this bucket. */
    public long storedBytes(String key, long valueBytes) {
        return KvBuckets.storedBytes(bucket, key, valueBytes);
    }

    /**
     * Charges {@code bytes} for {@code key} of {@code projectId}, replacing the key's previous
     * charge. Growing is refused (nothing changes) when the project's total would exceed
     * {@code allowed}; keeping or shrinking an entry is always allowed.
     *
     * @return whether the charge was made
     */
    public boolean charge(String projectId, String key, long bytes, long allowed) {
        long now = clock.millis();
        boolean[] charged = {false};
        shares.compute(projectId, (k, s) -> {
            Share share = s == null ? new Share() : s;
            share.expire(now);
            long old = share.live.getOrDefault(key, 0L);
            long total = share.total - old + bytes;
            if (bytes > old && total > allowed) {
                return share.empty() ? null : share;
            }
            share.live.put(key, bytes);
            share.total = total;
            charged[0] = true;
            return share;
        });
        return charged[0];
    }

    /** Stops charging {@code key} as a live entry; its delete marker is charged until it expires. */
    public void release(String projectId, String key) {
        long now = clock.millis();
        shares.computeIfPresent(projectId, (k, share) -> {
            share.expire(now);
            Long old = share.live.remove(key);
            if (old != null) {
                long marker = KvBuckets.markerBytes(bucket, key);
                long expires = now + markerLife.get().toMillis();
                Marker last = share.markers.peekLast();
                // kept in expiry order (a shorter max age than before: no earlier than the last)
                share.markers.addLast(
                        new Marker(last == null ? expires : Math.max(expires, last.expiresAtMs()), marker));
                share.total += marker - old;
            }
            return share.empty() ? null : share;
        });
    }

    /** Stops charging {@code key} without a marker: the bucket holds nothing of it any more (or another replica's write). */
    public void forget(String projectId, String key) {
        long now = clock.millis();
        shares.computeIfPresent(projectId, (k, share) -> {
            share.expire(now);
            Long old = share.live.remove(key);
            if (old != null) {
                share.total -= old;
            }
            return share.empty() ? null : share;
        });
    }

    /** This replica's bytes of {@code projectId} in the bucket now. */
    public long bytes(String projectId) {
        long now = clock.millis();
        long[] out = {0};
        shares.computeIfPresent(projectId, (k, share) -> {
            share.expire(now);
            out[0] = share.total;
            return share.empty() ? null : share;
        });
        return out[0];
    }

    @Override
    public Map<String, Long> totals() {
        Map<String, Long> out = new HashMap<>();
        for (String projectId : shares.keySet()) {
            long bytes = bytes(projectId);
            if (bytes > 0) {
                out.put(projectId, bytes);
            }
        }
        return out;
    }
}
