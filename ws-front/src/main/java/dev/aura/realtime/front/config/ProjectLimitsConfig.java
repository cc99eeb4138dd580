package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.EnvVars;
import java.time.Duration;

/**
 * The global defaults of the per-project limits and how replicas share their counts
 * (docs/design.md D8). A project's row in {@code aura_platform.project_limits} overrides any of
 * them; channels per client and payload size default to {@code WS_MAX_CHANNELS_PER_CONNECTION}
 * and {@code WS_MAX_BROADCAST_PAYLOAD_BYTES}.
 *
 * @param maxConcurrentUsers {@code PROJECT_MAX_CONCURRENT_USERS} (200) connections per project
 * @param maxEventsPerSecond {@code PROJECT_MAX_EVENTS_PER_SECOND} (100) client messages per second
 * @param maxJoinsPerSecond {@code PROJECT_MAX_JOINS_PER_SECOND} (100) joins per second
 * @param maxBytesPerSecond {@code PROJECT_MAX_BYTES_PER_SECOND} (100,000) client payload bytes per second
 * @param maxPresenceEventsPerSecond {@code PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND} (20)
 * @param maxChecksPerSecond {@code PROJECT_MAX_CHECKS_PER_SECOND} subscription checks per second
 *     that joins may cause; 0 (the default) means ten times the project's joins per second
 * @param maxRegistryBytes {@code PROJECT_MAX_REGISTRY_BYTES} bytes of the project in the registry
 *     bucket; 0 (the default) means {@code REGISTRY_BUCKET_MAX_BYTES / 40}
 * @param maxPresenceBytes {@code PROJECT_MAX_PRESENCE_BYTES} bytes of the project in the presence
 *     bucket; 0 (the default) means {@code PRESENCE_BUCKET_MAX_BYTES / 40}
 * @param usageInterval {@code PROJECT_USAGE_INTERVAL_MS} (1,000 ms) between usage reports
 * @param limitsRefresh {@code PROJECT_LIMITS_REFRESH_MS} (30,000 ms) before overrides are asked again
 */
public record ProjectLimitsConfig(
        int maxConcurrentUsers,
        int maxEventsPerSecond,
        int maxJoinsPerSecond,
        long maxBytesPerSecond,
        int maxPresenceEventsPerSecond,
        int maxChecksPerSecond,
        long maxRegistryBytes,
        long maxPresenceBytes,
        Duration usageInterval,
        Duration limitsRefresh) {

    static ProjectLimitsConfig load(Env env) {
        return new ProjectLimitsConfig(
                env.integer(EnvVars.PROJECT_MAX_CONCURRENT_USERS, 1, Integer.MAX_VALUE),
                env.integer(EnvVars.PROJECT_MAX_EVENTS_PER_SECOND, 1, Integer.MAX_VALUE),
                env.integer(EnvVars.PROJECT_MAX_JOINS_PER_SECOND, 1, Integer.MAX_VALUE),
                env.longValue(EnvVars.PROJECT_MAX_BYTES_PER_SECOND, 1, Long.MAX_VALUE),
                env.integer(EnvVars.PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND, 1, Integer.MAX_VALUE),
                env.integer(EnvVars.PROJECT_MAX_CHECKS_PER_SECOND, 0, Integer.MAX_VALUE),
                env.longValue(EnvVars.PROJECT_MAX_REGISTRY_BYTES, 0, Long.MAX_VALUE),
                env.longValue(EnvVars.PROJECT_MAX_PRESENCE_BYTES, 0, Long.MAX_VALUE),
                env.millis(EnvVars.PROJECT_USAGE_INTERVAL_MS, 100, 60_000),
                env.millis(EnvVars.PROJECT_LIMITS_REFRESH_MS, 100, 86_400_000));
    }
}
