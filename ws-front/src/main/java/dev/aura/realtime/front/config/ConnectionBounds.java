package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.Env;
import java.time.Duration;

/**
 * Time bounds of a connection that holds a file descriptor (and buffers) without completing
 * anything: between HTTP requests, inside one, and inside a fragmented WebSocket message
 * (docs/security.md, pre-authentication bounds). The first request head of a connection has its
 * own fixed deadline (5 s, {@code FrontInitializer.FIRST_REQUEST_DEADLINE}). The variables are
 * declared in {@link FrontSettings}.
 *
 * @param keepAlive {@code HTTP_KEEP_ALIVE_TIMEOUT_MS}: after a response, the next
 *     request head must be complete within this, else the connection is closed. Its default is
 *     longer than the 60 s idle timeout of the usual proxies in front (ingress-nginx's upstream keep-alive, cloud
 *     load balancers), so the proxy closes an idle upstream connection first and never sends a
 *     request into one this server is closing
 * @param body {@code HTTP_BODY_TIMEOUT_MS}: a request body must be complete within
 *     this after its head, else {@code 408} and close
 * @param fragment {@code WS_FRAGMENT_TIMEOUT_MS}: a fragmented WebSocket message must
 *     be complete within this after its first frame, else close 1008
 */
public record ConnectionBounds(Duration keepAlive, Duration body, Duration fragment) {

    static ConnectionBounds load(Env env) {
        return new ConnectionBounds(
                FrontSettings.HTTP_KEEP_ALIVE_TIMEOUT_MS.read(env),
                FrontSettings.HTTP_BODY_TIMEOUT_MS.read(env),
                FrontSettings.WS_FRAGMENT_TIMEOUT_MS.read(env));
    }
}
