package dev.aura.realtime.front.transport;

import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.front.channel.ChannelServices;
import dev.aura.realtime.front.protocol.BinaryFrames;
import dev.aura.realtime.front.protocol.JsonFrames;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the HTTP/WebSocket pipeline needs, built once by {@code WsFrontMain}.
 *
 * @param services the channel layer's services
 * @param verifier verifies the {@code apikey} at connect
 * @param json text frame codec
 * @param binary binary frame codec
 * @param maxFrameBytes largest WebSocket message (bytes)
 * @param idleTimeout inbound silence that closes a socket
 * @param slowClientTimeout time a socket may stay unwritable before it is dropped
 * @param natsConnected health: is NATS connected
 * @param prometheusScrape {@code /metrics} body
 * @param sseHeartbeat interval of SSE keep-alive comments
 */
public record TransportContext(
        ChannelServices services,
        JwtVerifier verifier,
        JsonFrames json,
        BinaryFrames binary,
        int maxFrameBytes,
        Duration idleTimeout,
        Duration slowClientTimeout,
        BooleanSupplier natsConnected,
        Supplier<String> prometheusScrape,
        Duration sseHeartbeat) {
    /** With the default SSE heartbeat of 15 s. */
    public TransportContext(
            ChannelServices services,
            JwtVerifier verifier,
            JsonFrames json,
            BinaryFrames binary,
            int maxFrameBytes,
            Duration idleTimeout,
            Duration slowClientTimeout,
            BooleanSupplier natsConnected,
            Supplier<String> prometheusScrape) {
        this(
                services,
                verifier,
                json,
                binary,
                maxFrameBytes,
                idleTimeout,
                slowClientTimeout,
                natsConnected,
                prometheusScrape,
                Duration.ofSeconds(15));
    }
}
