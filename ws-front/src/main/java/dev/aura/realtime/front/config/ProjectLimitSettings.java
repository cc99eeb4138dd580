package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.Setting;
import java.time.Duration;
import java.util.List;

/**
 * The environment variables of the per-project limits' global defaults and of how replicas share
 * their counts (docs/design.md D8), read by {@link ProjectLimitsConfig}; part of
 * {@link FrontSettings#ALL}. A project's row in {@code aura_platform.project_limits} overrides any
 * of them.
 */
public final class ProjectLimitSettings {
    private ProjectLimitSettings() {}

    public static final Setting<Integer> PROJECT_MAX_CONCURRENT_USERS = Setting.integer(
                    "PROJECT_MAX_CONCURRENT_USERS", "connections", 200)
            .range(1, Integer.MAX_VALUE)
            .doc("Connections per project across replicas (ConnectionRateLimitReached, HTTP 429); per-project"
                    + " override in aura_platform.project_limits");
    public static final Setting<Integer> PROJECT_MAX_EVENTS_PER_SECOND = Setting.integer(
                    "PROJECT_MAX_EVENTS_PER_SECOND", "events/s", 100)
            .range(1, Integer.MAX_VALUE)
            .doc("Client broadcast/presence messages per second per project across replicas"
                    + " (MessagePerSecondRateLimitReached)");
    public static final Setting<Integer> PROJECT_MAX_JOINS_PER_SECOND = Setting.integer(
                    "PROJECT_MAX_JOINS_PER_SECOND", "joins/s", 100)
            .range(1, Integer.MAX_VALUE)
            .doc("Channel joins per second per project across replicas (ClientJoinRateLimitReached)");
    public static final Setting<Long> PROJECT_MAX_BYTES_PER_SECOND = Setting.longValue(
                    "PROJECT_MAX_BYTES_PER_SECOND", "bytes/s", 100_000)
            .range(1, Long.MAX_VALUE)
            .doc("Client message payload bytes per second per project across replicas"
                    + " (MessagePerSecondRateLimitReached)");
    public static final Setting<Integer> PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND = Setting.integer(
                    "PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND", "events/s", 20)
            .range(1, Integer.MAX_VALUE)
            .doc("Presence track/untrack per second per project across replicas (ClientPresenceRateLimitReached)");
    public static final Setting<Integer> PROJECT_MAX_CHECKS_PER_SECOND = Setting.integer(
                    "PROJECT_MAX_CHECKS_PER_SECOND", "checks/s", 0)
            .range(0, Integer.MAX_VALUE)
            .doc("Subscription checks per second per project across replicas that joins may cause: one per distinct"
                    + " postgres_changes binding, one per private channel (SubscriptionCheckRateLimitReached); 0: ten"
                    + " times the project's max_joins_per_second");
    public static final Setting<Long> PROJECT_MAX_REGISTRY_BYTES = Setting.bytes("PROJECT_MAX_REGISTRY_BYTES", 0)
            .doc("Bytes one project's postgres_changes bindings may occupy in the aura_subscriptions bucket across"
                    + " replicas (RegistryQuotaExceeded); 0: REGISTRY_BUCKET_MAX_BYTES / 40");
    public static final Setting<Long> PROJECT_MAX_PRESENCE_BYTES = Setting.bytes("PROJECT_MAX_PRESENCE_BYTES", 0)
            .doc("Bytes one project's presences may occupy in the aura_presence bucket across replicas"
                    + " (PresenceQuotaExceeded); 0: PRESENCE_BUCKET_MAX_BYTES / 40");
    public static final Setting<Duration> PROJECT_USAGE_INTERVAL_MS = Setting.millis("PROJECT_USAGE_INTERVAL_MS", 1000)
            .range(100, 60_000)
            .doc("Interval of each replica's per-project usage report to the others (how stale cross-replica counts"
                    + " may be); reports go out on the wall clock's multiples of it, just after the second they report"
                    + " ends");
    public static final Setting<Duration> PROJECT_LIMITS_REFRESH_MS = Setting.millis(
                    "PROJECT_LIMITS_REFRESH_MS", 30_000)
            .range(100, 86_400_000)
            .doc("Age after which a project's limit overrides are asked again from a cdc-worker");

    /** In the order of docs/configuration.md. */
    public static final List<Setting<?>> ALL = List.of(
            PROJECT_MAX_CONCURRENT_USERS,
            PROJECT_MAX_EVENTS_PER_SECOND,
            PROJECT_MAX_JOINS_PER_SECOND,
            PROJECT_MAX_BYTES_PER_SECOND,
            PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND,
            PROJECT_MAX_CHECKS_PER_SECOND,
            PROJECT_MAX_REGISTRY_BYTES,
            PROJECT_MAX_PRESENCE_BYTES,
            PROJECT_USAGE_INTERVAL_MS,
            PROJECT_LIMITS_REFRESH_MS);
}
