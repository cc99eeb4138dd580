package dev.aura.realtime.front.session;

import dev.aura.realtime.front.config.FrontConfig;

/**
 * Per-connection limits (docs/design.md D8). The per-project ones, channels per client and
 * payload size included, are the project quotas' ({@code quota.ProjectQuotas}).
 *
 * @param maxJoinsPerSecond joins per connection per second
 * @param maxEventsPerSecond client events (broadcast, presence) per connection per second
 * @param maxPresenceEventsPerSecond presence pushes (track, untrack) per connection per second
 * @param maxOutboundBytes queued outbound bytes that disconnect a client at once
 * @param maxPresencePayloadBytes serialised bytes of one presence track payload
 */
public record Limits(
        int maxJoinsPerSecond,
        int maxEventsPerSecond,
        int maxPresenceEventsPerSecond,
        long maxOutboundBytes,
        int maxPresencePayloadBytes) {
    public static Limits from(FrontConfig config) {
        return new Limits(
                config.maxJoinsPerSecond(),
                config.maxEventsPerSecond(),
                config.presence().maxEventsPerSecond(),
                config.maxOutboundBytes(),
                config.maxPresencePayloadBytes());
    }
}
