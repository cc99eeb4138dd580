package dev.aura.realtime.front.transport;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.quota.ProjectQuotas;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshakerFactory;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Routes HTTP requests of one connection: {@code GET /health}, {@code GET /metrics}, the demo
 * page ({@code GET /}) and the inspector ({@code GET /inspector}, {@link StaticPages}; its
 * project status, {@link InspectorEndpoint}), and the
 * WebSocket upgrade at {@code /realtime/v1/websocket} and {@code /socket/websocket}. The
 * {@code apikey} (query parameter, else header: a JWT or a project API key) is verified before
 * the upgrade ({@link Verification}); a missing or refused one is said in the protocol
 * ({@link RefusedSocket}: a browser reads no HTTP error body), logged and counted
 * ({@link ConnectRefusals}). An accepted upgrade, or SSE request ({@link SseEndpoint}),
 * has {@link FrontInitializer} replace this handler with the WebSocket or SSE pipeline.
 */
final class HttpRouter extends SimpleChannelInboundHandler<FullHttpRequest> {
    static final Set<String> WS_PATHS = Set.of("/realtime/v1/websocket", "/socket/websocket");

    private final TransportContext context;
    private final AtomicBoolean draining;
    private final FrontInitializer pipelines;

    HttpRouter(TransportContext context, AtomicBoolean draining, FrontInitializer pipelines) {
        this.context = context;
        this.draining = draining;
        this.pipelines = pipelines;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest req) {
        if (!req.decoderResult().isSuccess()) {
            respond(ctx, req, HttpResponseStatus.BAD_REQUEST, "application/json", error("Bad request"));
            return;
        }
        QueryStringDecoder query = new QueryStringDecoder(req.uri());
        String path = query.path();
        if (WS_PATHS.contains(path)) {
            upgrade(ctx, req, query);
        } else if (RestBroadcastEndpoint.matches(path)) {
            RestBroadcastEndpoint.handle(ctx, req, query, context);
        } else if (path.equals(SseEndpoint.PATH)) {
            SseEndpoint.open(ctx, req, query, context, draining.get(), pipelines);
        } else if (path.equals("/health") && req.method() == HttpMethod.GET) {
            ObjectNode body = JsonNodeFactory.instance.objectNode();
            body.put("status", draining.get() ? "draining" : "ok");
            body.put("nats_connected", context.natsConnected().getAsBoolean());
            body.put("connections", context.sessions().size());
            respond(ctx, req, HttpResponseStatus.OK, "application/json", body.toString());
        } else if (path.equals("/metrics") && req.method() == HttpMethod.GET) {
            respond(
                    ctx,
                    req,
                    HttpResponseStatus.OK,
                    "text/plain; version=0.0.4; charset=utf-8",
                    context.prometheusScrape().get());
        } else if (path.equals(InspectorEndpoint.PATH)) {
            InspectorEndpoint.handle(ctx, req, context);
        } else if (req.method() == HttpMethod.GET && StaticPages.INSTANCE.get(path) != null) {
            StaticPages.Asset asset = StaticPages.INSTANCE.get(path);
            respond(
                    ctx,
                    req,
                    HttpResponseStatus.OK,
                    asset.contentType(),
                    Unpooled.wrappedBuffer(asset.body()),
                    asset.headers());
        } else {
            respond(ctx, req, HttpResponseStatus.NOT_FOUND, "application/json", error("Not found"));
        }
    }

    private void upgrade(ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder query) {
        if (draining.get()) {
            respond(
                    ctx,
                    req,
                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "application/json",
                    error("Server is shutting down"));
            return;
        }
        if (!"websocket".equalsIgnoreCase(req.headers().get(HttpHeaderNames.UPGRADE))) {
            respond(ctx, req, HttpResponseStatus.BAD_REQUEST, "application/json", error("WebSocket upgrade expected"));
            return;
        }
        Vsn vsn = Vsn.fromQuery(first(query, "vsn"));
        if (vsn == null) {
            respond(
                    ctx,
                    req,
                    HttpResponseStatus.BAD_REQUEST,
                    "application/json",
                    error("Unsupported vsn: " + first(query, "vsn")));
            return;
        }
        String url = "ws://" + req.headers().get(HttpHeaderNames.HOST, "localhost") + query.path();
        WebSocketServerHandshaker handshaker =
                new WebSocketServerHandshakerFactory(url, "phoenix", false, context.maxFrameBytes()).newHandshaker(req);
        if (handshaker == null) {
            WebSocketServerHandshakerFactory.sendUnsupportedVersionResponse(ctx.channel());
            return;
        }
        String apikey = first(query, "apikey");
        if (apikey == null || apikey.isBlank()) {
            apikey = req.headers().get("apikey"); // server-side clients may send it as a header
        }
        if (apikey == null || apikey.isBlank()) {
            refuse(ctx, req, query, handshaker, vsn, ConnectRefusals.API_KEY_MISSING, "API key is missing");
            return;
        }
        Verification.then(
                ctx,
                req,
                context.credentials().verify(apikey),
                claims -> upgrade(ctx, req, query, handshaker, vsn, claims),
                e -> refuse(ctx, req, query, handshaker, vsn, e.code(), e.reason()));
    }

    private void upgrade(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            QueryStringDecoder query,
            WebSocketServerHandshaker handshaker,
            Vsn vsn,
            Claims claims) {
        if (!admitConnection(ctx, req, context, claims, pipelines.refusals())) {
            return;
        }
        pipelines.webSocket(ctx.pipeline(), ctx.name(), handshaker, vsn, claims);
        handshake(ctx, req, handshaker);
    }

    /**
     * Refuses a WebSocket at connect in the protocol ({@link RefusedSocket}): an HTTP 401's body
     * never reaches a browser's WebSocket, the join's error reply and the close frame do. Logged
     * and counted ({@link ConnectRefusals}).
     */
    private void refuse(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            QueryStringDecoder query,
            WebSocketServerHandshaker handshaker,
            Vsn vsn,
            String code,
            String reason) {
        pipelines.refusals().refused(ctx.channel(), code, reason, query.path());
        pipelines.refusedWebSocket(ctx.pipeline(), ctx.name(), handshaker, vsn, reason);
        handshake(ctx, req, handshaker);
    }

    private static void handshake(
            ChannelHandlerContext ctx, FullHttpRequest req, WebSocketServerHandshaker handshaker) {
        handshaker.handshake(ctx.channel(), req).addListener((ChannelFutureListener) f -> {
            if (!f.isSuccess()) {
                f.channel().close();
            }
        });
    }

    /**
     * Takes one of the project's connection slots for this connection until it closes; when the
     * project has {@code max_concurrent_users} connections across replicas, answers HTTP 429
     * {@code ConnectionRateLimitReached: Too many connected users} (as Supabase does at connect).
     */
    static boolean admitConnection(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            TransportContext context,
            Claims claims,
            ConnectRefusals refusals) {
        ProjectQuotas.Permit permit = context.quotas().admitConnection(claims.projectId());
        if (permit == null) {
            refusals.refused(
                    ctx.channel(),
                    ConnectRefusals.CONNECTION_RATE_LIMIT,
                    Reasons.TOO_MANY_USERS,
                    new QueryStringDecoder(req.uri()).path());
            respond(ctx, req, HttpResponseStatus.TOO_MANY_REQUESTS, "application/json", error(Reasons.TOO_MANY_USERS));
            return false;
        }
        ctx.channel().closeFuture().addListener(f -> permit.release());
        return true;
    }

    static String first(QueryStringDecoder query, String name) {
        List<String> values = query.parameters().get(name);
        return values == null || values.isEmpty() ? null : values.get(0);
    }

    static String error(String message) {
        ObjectNode node = JsonNodeFactory.instance.objectNode();
        node.put("error", message);
        return node.toString();
    }

    /**
     * Answers {@code status} with {@code {"error": message}} outside any request's handling (an
     * oversized or timed-out request), then closes the connection. Carries
     * {@code Access-Control-Allow-Origin: *}: a browser's REST broadcast must be able to read why.
     */
    static void respondAndClose(ChannelHandlerContext ctx, HttpResponseStatus status, String message) {
        FullHttpResponse res = new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, status, Unpooled.copiedBuffer(error(message), StandardCharsets.UTF_8));
        res.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "application/json")
                .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*")
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        HttpUtil.setContentLength(res, res.content().readableBytes());
        ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
    }

    static void respond(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            HttpResponseStatus status,
            String contentType,
            String body) {
        respond(ctx, req, status, contentType, Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
    }

    private static void respond(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            HttpResponseStatus status,
            String contentType,
            ByteBuf body) {
        respond(ctx, req, status, contentType, body, EmptyHttpHeaders.INSTANCE);
    }

    /** Like {@link #respond(ChannelHandlerContext, FullHttpRequest, HttpResponseStatus, String, String)}, plus {@code extra} headers. */
    static void respond(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            HttpResponseStatus status,
            String contentType,
            ByteBuf body,
            HttpHeaders extra) {
        FullHttpResponse res = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, body);
        res.headers().add(extra);
        res.headers().set(HttpHeaderNames.CONTENT_TYPE, contentType);
        HttpUtil.setContentLength(res, res.content().readableBytes());
        boolean keepAlive = HttpUtil.isKeepAlive(req) && status.code() < 400;
        if (keepAlive) {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
            ctx.writeAndFlush(res);
        } else {
            res.headers().set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
            ctx.writeAndFlush(res).addListener(ChannelFutureListener.CLOSE);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
