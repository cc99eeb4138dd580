package dev.aura.realtime.front.quota;

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
 * @param maxChecksPerSecond subscription checks per second that joins may cause, across replicas;
 *     0 in the defaults means {@value #CHECKS_PER_JOIN} times the project's joins per second
 * @param maxRegistryBytes bytes of the project's entries in the registry bucket, across replicas
 * @param maxPresenceBytes bytes of the project's presences in the presence bucket, across replicas
 * @param maxResumeBytes bytes of the project's resume records and pointers in the {@code aura_resume}
 *     bucket, across replicas
 */
public record ProjectQuota(
        int maxConcurrentUsers,
        int maxEventsPerSecond,
        int maxJoinsPerSecond,
        int maxChannelsPerClient,
        long maxBytesPerSecond,
        int maxPayloadBytes,
        int maxPresenceEventsPerSecond,
        int maxChecksPerSecond,
        long maxRegistryBytes,
        long maxPresenceBytes,
        long maxResumeBytes) {

    /** Checks per join the derived checks budget allows on average ({@code max_joins_per_second × 10}). */
    public static final int CHECKS_PER_JOIN = 10;

    /** A bucket's default share per project: 1/40, so 32 projects at their share fill 80% of it. */
    public static final int BUCKET_SHARES = 40;

    /** Rate and size limits only: the checks budget derived from joins, the bucket shares unbounded. */
    public ProjectQuota(
            int maxConcurrentUsers,
            int maxEventsPerSecond,
            int maxJoinsPerSecond,
            int maxChannelsPerClient,
            long maxBytesPerSecond,
            int maxPayloadBytes,
            int maxPresenceEventsPerSecond) {
        this(
                maxConcurrentUsers,
                maxEventsPerSecond,
                maxJoinsPerSecond,
                maxChannelsPerClient,
                maxBytesPerSecond,
                maxPayloadBytes,
                maxPresenceEventsPerSecond,
                0,
                Long.MAX_VALUE,
                Long.MAX_VALUE,
                Long.MAX_VALUE);
    }

    /** As before issue 38: no share of the {@code aura_resume} bucket (unbounded). */
    public ProjectQuota(
            int maxConcurrentUsers,
            int maxEventsPerSecond,
            int maxJoinsPerSecond,
            int maxChannelsPerClient,
            long maxBytesPerSecond,
            int maxPayloadBytes,
            int maxPresenceEventsPerSecond,
            int maxChecksPerSecond,
            long maxRegistryBytes,
            long maxPresenceBytes) {
        this(
                maxConcurrentUsers,
                maxEventsPerSecond,
                maxJoinsPerSecond,
                maxChannelsPerClient,
                maxBytesPerSecond,
                maxPayloadBytes,
                maxPresenceEventsPerSecond,
                maxChecksPerSecond,
                maxRegistryBytes,
                maxPresenceBytes,
                Long.MAX_VALUE);
    }

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
                p.maxPresenceEventsPerSecond(),
                p.maxChecksPerSecond(),
                p.maxRegistryBytes() > 0 ? p.maxRegistryBytes() : config.registryBucketMaxBytes() / BUCKET_SHARES,
                p.maxPresenceBytes() > 0
                        ? p.maxPresenceBytes()
                        : config.presence().bucketMaxBytes() / BUCKET_SHARES,
                config.resumeBucketMaxBytes() / BUCKET_SHARES);
    }

    /**
     * These limits with every non-null override of {@code o} applied. Without an override or a
     * global {@code PROJECT_MAX_CHECKS_PER_SECOND}, the checks budget is {@value #CHECKS_PER_JOIN}
     * times the joins per second in force (so raising a project's joins raises its checks).
     */
    public ProjectQuota with(ProjectLimits o) {
        int joins = o.maxJoinsPerSecond() != null ? o.maxJoinsPerSecond() : maxJoinsPerSecond;
        int checks = o.maxChecksPerSecond() != null
                ? o.maxChecksPerSecond()
                : maxChecksPerSecond > 0
                        ? maxChecksPerSecond
                        : (int) Math.min(Integer.MAX_VALUE, (long) joins * CHECKS_PER_JOIN);
        return new ProjectQuota(
                o.maxConcurrentUsers() != null ? o.maxConcurrentUsers() : maxConcurrentUsers,
                o.maxEventsPerSecond() != null ? o.maxEventsPerSecond() : maxEventsPerSecond,
                joins,
                o.maxChannelsPerClient() != null ? o.maxChannelsPerClient() : maxChannelsPerClient,
                o.maxBytesPerSecond() != null ? o.maxBytesPerSecond() : maxBytesPerSecond,
                o.maxPayloadSizeInKb() != null
                        ? (int) Math.min(Integer.MAX_VALUE, o.maxPayloadSizeInKb() * 1024L)
                        : maxPayloadBytes,
                o.maxPresenceEventsPerSecond() != null ? o.maxPresenceEventsPerSecond() : maxPresenceEventsPerSecond,
                checks,
                o.maxRegistryBytes() != null ? o.maxRegistryBytes() : maxRegistryBytes,
                o.maxPresenceBytes() != null ? o.maxPresenceBytes() : maxPresenceBytes,
                o.maxResumeBytes() != null ? o.maxResumeBytes() : maxResumeBytes);
    }
}
