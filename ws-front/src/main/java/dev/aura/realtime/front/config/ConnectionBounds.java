package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.EnvVars;
import java.time.Duration;

/**
 * Time bounds of a connection that holds a file descriptor (and buffers) without completing
 * anything: between HTTP requests, inside one, and inside a fragmented WebSocket message
 * (docs/security.md, pre-authentication bounds). The first request head of a connection has its
 * own fixed deadline (5 s, {@code FrontInitializer.FIRST_REQUEST_DEADLINE}).
 *
 * @param keepAlive {@code HTTP_KEEP_ALIVE_TIMEOUT_MS} (75,000 ms): after a response, the next
 *     request head must be complete within this, else the connection is closed. Longer than the
 *     60 s idle timeout of the usual proxies in front (ingress-nginx's upstream keep-alive, cloud
 *     load balancers), so the proxy closes an idle upstream connection first and never sends a
 *     request into one this server is closing
 * @param body {@code HTTP_BODY_TIMEOUT_MS} (10,000 ms): a request body must be complete within
 *     this after its head, else {@code 408} and close
 * @param fragment {@code WS_FRAGMENT_TIMEOUT_MS} (10,000 ms): a fragmented WebSocket message must
 *     be complete within this after its first frame, else close 1008
 */
public record ConnectionBounds(Duration keepAlive, Duration body, Duration fragment) {

    static ConnectionBounds load(Env env) {
        return new ConnectionBounds(
                env.millis(EnvVars.HTTP_KEEP_ALIVE_TIMEOUT_MS, 10, 3_600_000),
                env.millis(EnvVars.HTTP_BODY_TIMEOUT_MS, 10, 3_600_000),
                env.millis(EnvVars.WS_FRAGMENT_TIMEOUT_MS, 10, 3_600_000));
    }
}
