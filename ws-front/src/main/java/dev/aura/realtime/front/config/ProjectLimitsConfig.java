package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.Env;
import java.time.Duration;

/**
 * The global defaults of the per-project limits and how replicas share their counts
 * (docs/design.md D8). A project's row in {@code aura_platform.project_limits} overrides any of
 * them; channels per client and payload size default to {@code WS_MAX_CHANNELS_PER_CONNECTION}
 * and {@code WS_MAX_BROADCAST_PAYLOAD_BYTES}. The variables are declared in
 * {@link ProjectLimitSettings}.
 *
 * @param maxConcurrentUsers {@code PROJECT_MAX_CONCURRENT_USERS} connections per project
 * @param maxEventsPerSecond {@code PROJECT_MAX_EVENTS_PER_SECOND} client messages per second
 * @param maxJoinsPerSecond {@code PROJECT_MAX_JOINS_PER_SECOND} joins per second
 * @param maxBytesPerSecond {@code PROJECT_MAX_BYTES_PER_SECOND} client payload bytes per second
 * @param maxPresenceEventsPerSecond {@code PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND}
 * @param maxChecksPerSecond {@code PROJECT_MAX_CHECKS_PER_SECOND} subscription checks per second
 *     that joins may cause; 0 (the default) means ten times the project's joins per second
 * @param maxRegistryBytes {@code PROJECT_MAX_REGISTRY_BYTES} bytes of the project in the registry
 *     bucket; 0 (the default) means {@code REGISTRY_BUCKET_MAX_BYTES / 40}
 * @param maxPresenceBytes {@code PROJECT_MAX_PRESENCE_BYTES} bytes of the project in the presence
 *     bucket; 0 (the default) means {@code PRESENCE_BUCKET_MAX_BYTES / 40}
 * @param usageInterval {@code PROJECT_USAGE_INTERVAL_MS} between usage reports
 * @param limitsRefresh {@code PROJECT_LIMITS_REFRESH_MS} before overrides are asked again
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
                ProjectLimitSettings.PROJECT_MAX_CONCURRENT_USERS.read(env),
                ProjectLimitSettings.PROJECT_MAX_EVENTS_PER_SECOND.read(env),
                ProjectLimitSettings.PROJECT_MAX_JOINS_PER_SECOND.read(env),
                ProjectLimitSettings.PROJECT_MAX_BYTES_PER_SECOND.read(env),
                ProjectLimitSettings.PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND.read(env),
                ProjectLimitSettings.PROJECT_MAX_CHECKS_PER_SECOND.read(env),
                ProjectLimitSettings.PROJECT_MAX_REGISTRY_BYTES.read(env),
                ProjectLimitSettings.PROJECT_MAX_PRESENCE_BYTES.read(env),
                ProjectLimitSettings.PROJECT_USAGE_INTERVAL_MS.read(env),
                ProjectLimitSettings.PROJECT_LIMITS_REFRESH_MS.read(env));
    }
}
