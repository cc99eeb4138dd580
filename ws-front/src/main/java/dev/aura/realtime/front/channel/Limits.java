package dev.aura.realtime.front.channel;

import dev.aura.realtime.front.config.FrontConfig;

/**
 * Per-connection limits (PRODUCT.md D8).
 *
 * @param maxChannels joined channels per connection
 * @param maxJoinsPerSecond joins per connection per second
 * @param maxEventsPerSecond client events (broadcast, presence) per connection per second
 * @param maxBroadcastPayloadBytes user payload bytes of one broadcast
 * @param maxOutboundBytes queued outbound bytes that disconnect a client at once
 */
public record Limits(
        int maxChannels,
        int maxJoinsPerSecond,
        int maxEventsPerSecond,
        int maxBroadcastPayloadBytes,
        long maxOutboundBytes) {
    public static Limits from(FrontConfig config) {
        return new Limits(
                config.maxChannelsPerConnection(),
                config.maxJoinsPerSecond(),
                config.maxEventsPerSecond(),
                config.maxBroadcastPayloadBytes(),
                config.maxOutboundBytes());
    }
}
