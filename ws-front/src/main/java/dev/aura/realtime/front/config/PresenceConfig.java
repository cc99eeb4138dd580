package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.EnvVars;
import java.time.Duration;

/**
 * Presence settings (docs/design.md D5).
 *
 * @param maxAge {@code PRESENCE_MAX_AGE_MS} (60,000 ms), max age of the {@code aura_presence} bucket
 *     when this replica creates it; a crashed replica's presences vanish within it
 * @param reconcileInterval {@code PRESENCE_RECONCILE_MS} (5,000 ms) between comparisons of the
 *     bucket's keys with this replica's view (expiry is silent to KV watchers on nats-server 2.9)
 * @param maxEventsPerSecond {@code WS_MAX_PRESENCE_EVENTS_PER_SECOND} (10), track/untrack per
 *     connection per second
 * @param bucketMaxBytes {@code PRESENCE_BUCKET_MAX_BYTES} (64 MiB), byte limit of the bucket
 */
public record PresenceConfig(Duration maxAge, Duration reconcileInterval, int maxEventsPerSecond, long bucketMaxBytes) {
    /** Local diffs are gathered this long and sent as one {@code presence_diff} per channel. */
    public static final Duration BATCH_WINDOW = Duration.ofMillis(20);

    public PresenceConfig {
        if (reconcileInterval.compareTo(maxAge) >= 0) {
            throw new ConfigException("PRESENCE_RECONCILE_MS must be shorter than PRESENCE_MAX_AGE_MS ("
                    + maxAge.toMillis() + " ms), else ghosts outlive the max age by a whole interval");
        }
    }

    /** Live presences are re-put this often: a quarter of the max age, so one lost put never expires them. */
    public Duration refreshInterval() {
        return maxAge.dividedBy(4);
    }

    static PresenceConfig load(Env env) {
        return new PresenceConfig(
                env.millis(EnvVars.PRESENCE_MAX_AGE_MS, 1_000, 86_400_000),
                env.millis(EnvVars.PRESENCE_RECONCILE_MS, 100, 3_600_000),
                env.integer(EnvVars.WS_MAX_PRESENCE_EVENTS_PER_SECOND, 1, 1_000_000),
                env.longValue(EnvVars.PRESENCE_BUCKET_MAX_BYTES, 64 * 1024, Long.MAX_VALUE));
    }
}
