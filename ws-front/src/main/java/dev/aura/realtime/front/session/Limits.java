package dev.aura.realtime.front.session;

import dev.aura.realtime.front.config.FrontConfig;
import dev.aura.realtime.front.quota.ProjectQuotas;

/**
 * Per-connection limits (docs/design.md D8). The per-project ones, channels per client and
 * payload size included, are {@link ProjectQuotas}'.
 *
 * @param maxJoinsPerSecond joins per connection per second
 * @param maxEventsPerSecond client events (broadcast, presence) per connection per second
 * @param maxPresenceEventsPerSecond presence pushes (track, untrack) per connection per second
 * @param maxOutboundBytes queued outbound bytes that disconnect a client at once
 * @param maxPresencePayloadBytes serialised bytes of one presence track payload
 * @param replicationReadyTimeoutMs how long a join with {@code config.broadcast.replication_ready}
 *     waits for changes to flow before its {@code system} error
 */
public record Limits(
        int maxJoinsPerSecond,
        int maxEventsPerSecond,
        int maxPresenceEventsPerSecond,
        long maxOutboundBytes,
        int maxPresencePayloadBytes,
        long replicationReadyTimeoutMs) {
    public static Limits from(FrontConfig config) {
        return new Limits(
                config.maxJoinsPerSecond(),
                config.maxEventsPerSecond(),
                config.presence().maxEventsPerSecond(),
                config.maxOutboundBytes(),
                config.maxPresencePayloadBytes(),
                config.replicationReadyTimeout().toMillis());
    }
}
