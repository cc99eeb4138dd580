package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import java.time.Duration;

/**
 * Presence settings (docs/design.md D5), declared in {@link FrontSettings}.
 *
 * @param maxAge {@code PRESENCE_MAX_AGE_MS}, max age of the {@code aura_presence} bucket
 *     when this replica creates it; a crashed replica's presences vanish within it
 * @param reconcileInterval {@code PRESENCE_RECONCILE_MS} between comparisons of the
 *     bucket's keys with this replica's view (expiry is silent to KV watchers on nats-server 2.9)
 * @param maxEventsPerSecond {@code WS_MAX_PRESENCE_EVENTS_PER_SECOND}, track/untrack per
 *     connection per second
 * @param bucketMaxBytes {@code PRESENCE_BUCKET_MAX_BYTES}, byte limit of the bucket
 */
public record PresenceConfig(Duration maxAge, Duration reconcileInterval, int maxEventsPerSecond, long bucketMaxBytes) {
    /** Local diffs are gathered this long and sent as one {@code presence_diff} per channel. */
    public static final Duration BATCH_WINDOW = Duration.ofMillis(20);

    public PresenceConfig {
        if (reconcileInterval.compareTo(maxAge) >= 0) {
            throw new ConfigException(FrontSettings.PRESENCE_RECONCILE_MS.name() + " must be shorter than "
                    + FrontSettings.PRESENCE_MAX_AGE_MS.name() + " (" + maxAge.toMillis()
                    + " ms), else ghosts outlive the max age by a whole interval");
        }
    }

    /** Live presences are re-put this often: a quarter of the max age, so one lost put never expires them. */
    public Duration refreshInterval() {
        return maxAge.dividedBy(4);
    }

    static PresenceConfig load(Env env) {
        return new PresenceConfig(
                FrontSettings.PRESENCE_MAX_AGE_MS.read(env),
                FrontSettings.PRESENCE_RECONCILE_MS.read(env),
                FrontSettings.WS_MAX_PRESENCE_EVENTS_PER_SECOND.read(env),
                FrontSettings.PRESENCE_BUCKET_MAX_BYTES.read(env));
    }
}
