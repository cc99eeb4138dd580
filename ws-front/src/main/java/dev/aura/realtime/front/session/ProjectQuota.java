package dev.aura.realtime.front.session;

import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.front.config.FrontConfig;
import dev.aura.realtime.front.config.ProjectLimitsConfig;

/**
 * The limits in force for one project (docs/design.md D8): its overrides from
 * {@code aura_platform.project_limits} over the global defaults.
 *
 * @param maxConcurrentUsers connections across replicas
 * @param maxEventsPerSecond client messages (broadcast, presence) per second across replicas
 * @param maxJoinsPerSecond joins per second across replicas
 * @param maxChannelsPerClient channels one connection may join
 * @param maxBytesPerSecond client message payload bytes per second across replicas
 * @param maxPayloadBytes largest broadcast payload
 * @param maxPresenceEventsPerSecond presence track/untrack per second across replicas
 */
public record ProjectQuota(
        int maxConcurrentUsers,
        int maxEventsPerSecond,
        int maxJoinsPerSecond,
        int maxChannelsPerClient,
        long maxBytesPerSecond,
        int maxPayloadBytes,
        int maxPresenceEventsPerSecond) {

    /** The global defaults of {@code config}. */
    public static ProjectQuota defaults(FrontConfig config) {
        ProjectLimitsConfig p = config.projectLimits();
        return new ProjectQuota(
                p.maxConcurrentUsers(),
                p.maxEventsPerSecond(),
                p.maxJoinsPerSecond(),
                config.maxChannelsPerConnection(),
                p.maxBytesPerSecond(),
                config.maxBroadcastPayloadBytes(),
                p.maxPresenceEventsPerSecond());
    }

    /** These limits with every non-null override of {@code o} applied. */
    public ProjectQuota with(ProjectLimits o) {
        return new ProjectQuota(
                o.maxConcurrentUsers() != null ? o.maxConcurrentUsers() : maxConcurrentUsers,
                o.maxEventsPerSecond() != null ? o.maxEventsPerSecond() : maxEventsPerSecond,
                o.maxJoinsPerSecond() != null ? o.maxJoinsPerSecond() : maxJoinsPerSecond,
                o.maxChannelsPerClient() != null ? o.maxChannelsPerClient() : maxChannelsPerClient,
                o.maxBytesPerSecond() != null ? o.maxBytesPerSecond() : maxBytesPerSecond,
                o.maxPayloadSizeInKb() != null
                        ? (int) Math.min(Integer.MAX_VALUE, o.maxPayloadSizeInKb() * 1024L)
                        : maxPayloadBytes,
                o.maxPresenceEventsPerSecond() != null ? o.maxPresenceEventsPerSecond() : maxPresenceEventsPerSecond);
    }
}
