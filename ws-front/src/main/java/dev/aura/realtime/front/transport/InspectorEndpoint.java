package dev.aura.realtime.front.transport;

import dev.aura.realtime.common.auth.Claims;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.nio.charset.StandardCharsets;

/**
 * {@code GET /inspector/status}: the project status the inspector page shows for a service key
 * (docs/design.md D9). Header {@code apikey}: a key of the project whose role is
 * {@code service_role}; the answer is that project's, and only that project's, status
 * ({@code front.inspect.ProjectInspector}). 401 for a missing or invalid key (its reason, as at
 * connect), 403 for any other role, 405 for another method. Same-origin only (no CORS headers):
 * the page that calls it is served by this replica. {@code Cache-Control: no-store}.
 */
final class InspectorEndpoint {
    static final String PATH = "/inspector/status";
    static final String NOT_SERVICE_ROLE =
            "Forbidden: the inspector's project status needs a service_role key of the project";

    private static final HttpHeaders NO_STORE = new DefaultHttpHeaders().set(HttpHeaderNames.CACHE_CONTROL, "no-store");

    private InspectorEndpoint() {}

    static void handle(ChannelHandlerContext ctx, FullHttpRequest req, TransportContext context) {
        if (req.method() != HttpMethod.GET) {
            reply(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, HttpRouter.error("Method not allowed: use GET"));
            return;
        }
        String apikey = req.headers().get("apikey");
        if (apikey == null || apikey.isBlank()) {
            reply(ctx, req, HttpResponseStatus.UNAUTHORIZED, HttpRouter.error("API key is missing"));
            return;
        }
        Verification.then(
                ctx,
                req,
                context.credentials().verify(apikey.trim()),
                claims -> status(ctx, req, context, claims),
                e -> reply(ctx, req, Verification.status(e), HttpRouter.error(e.getMessage())));
    }

    private static void status(
            ChannelHandlerContext ctx, FullHttpRequest req, TransportContext context, Claims claims) {
        if (!claims.isServiceRole()) {
            reply(ctx, req, HttpResponseStatus.FORBIDDEN, HttpRouter.error(NOT_SERVICE_ROLE));
            return;
        }
        req.retain();
        context.inspector()
                .inspect(claims.projectId())
                .whenComplete((status, err) -> ctx.executor().execute(() -> {
                    try {
                        if (err != null) {
                            reply(
                                    ctx,
                                    req,
                                    HttpResponseStatus.INTERNAL_SERVER_ERROR,
                                    HttpRouter.error("Internal error"));
                        } else {
                            reply(ctx, req, HttpResponseStatus.OK, status.toString());
                        }
                    } finally {
                        req.release();
                    }
                }));
    }

    private static void reply(ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, String json) {
        HttpRouter.respond(
                ctx, req, status, "application/json", Unpooled.copiedBuffer(json, StandardCharsets.UTF_8), NO_STORE);
    }
}
