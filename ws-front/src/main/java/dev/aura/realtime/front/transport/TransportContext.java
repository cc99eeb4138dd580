package dev.aura.realtime.front.transport;

import dev.aura.realtime.front.auth.Credentials;
import dev.aura.realtime.front.broadcast.RestBroadcasts;
import dev.aura.realtime.front.channel.ChannelLayer;
import dev.aura.realtime.front.config.ConnectionBounds;
import dev.aura.realtime.front.inspect.ProjectInspector;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.BinaryFrames;
import dev.aura.realtime.front.protocol.JsonFrames;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.session.Sessions;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What the HTTP, WebSocket and SSE pipelines need, built once by {@code FrontApp.start} from
 * the configuration.
 *
 * @param channels makes each connection's channel layer
 * @param credentials verifies the {@code apikey} at connect and a REST request's credentials
 *     (JWTs and project API keys; shared with the joins' tokens)
 * @param quotas the projects' connection slots
 * @param sessions open connections ({@code /health})
 * @param metrics meters
 * @param json text frame codec
 * @param binary binary frame codec
 * @param maxFrameBytes largest WebSocket message ({@code WS_MAX_FRAME_BYTES})
 * @param idleTimeout inbound silence that closes a socket ({@code WS_IDLE_TIMEOUT_MS})
 * @param slowClientTimeout time a socket may stay unwritable before it is dropped ({@code WS_SLOW_CLIENT_TIMEOUT_MS})
 * @param natsConnected health: is NATS connected
 * @param prometheusScrape {@code /metrics} body
 * @param sseHeartbeat interval of SSE keep-alive comments ({@code SSE_HEARTBEAT_MS})
 * @param restBroadcasts the channel side of REST broadcast
 * @param bounds keep-alive, body and fragment timeouts ({@code HTTP_KEEP_ALIVE_TIMEOUT_MS},
 *     {@code HTTP_BODY_TIMEOUT_MS}, {@code WS_FRAGMENT_TIMEOUT_MS})
 * @param inspector a project's status for the inspector page ({@code GET /inspector/status})
 */
public record TransportContext(
        ChannelLayer channels,
        Credentials credentials,
        ProjectQuotas quotas,
        Sessions sessions,
        FrontMetrics metrics,
        JsonFrames json,
        BinaryFrames binary,
        int maxFrameBytes,
        Duration idleTimeout,
        Duration slowClientTimeout,
        BooleanSupplier natsConnected,
        Supplier<String> prometheusScrape,
        Duration sseHeartbeat,
        RestBroadcasts restBroadcasts,
        ConnectionBounds bounds,
        ProjectInspector inspector) {}
