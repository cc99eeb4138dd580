package dev.aura.realtime.front.session;

import dev.aura.realtime.front.config.FrontConfig;

/**
 * Per-connection limits (docs/design.md D8).
 *
 * @param maxChannels joined channels per connection
 * @param maxJoinsPerSecond joins per connection per second
 * @param maxEventsPerSecond client events (broadcast, presence) per connection per second
 * @param maxPresenceEventsPerSecond presence pushes (track, untrack) per connection per second
 * @param maxBroadcastPayloadBytes user payload bytes of one broadcast
 * @param maxOutboundBytes queued outbound bytes that disconnect a client at once
 * @param maxBindingsPerJoin postgres_changes bindings in one join
 * @param maxPresencePayloadBytes serialised bytes of one presence track payload
 */
public record Limits(
        int maxChannels,
        int maxJoinsPerSecond,
        int maxEventsPerSecond,
        int maxPresenceEventsPerSecond,
        int maxBroadcastPayloadBytes,
        long maxOutboundBytes,
        int maxBindingsPerJoin,
        int maxPresencePayloadBytes) {
    public static Limits from(FrontConfig config) {
        return new Limits(
                config.maxChannelsPerConnection(),
                config.maxJoinsPerSecond(),
                config.maxEventsPerSecond(),
                config.presence().maxEventsPerSecond(),
                config.maxBroadcastPayloadBytes(),
                config.maxOutboundBytes(),
                config.maxBindingsPerJoin(),
                config.maxPresencePayloadBytes());
    }
}
