package dev.aura.realtime.front.transport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Topics;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.QueryStringDecoder;

/**
 * {@code GET /realtime/v1/sse?topic=<channel name>&apikey=<jwt>[&postgres_changes=<JSON array>][&lastEventId=<id>]}:
 * one channel as a {@code text/event-stream} (docs/design.md D7). The {@code apikey} (also accepted
 * as {@code apikey} header or {@code Authorization: Bearer}) is verified before the stream
 * starts; failures answer {@code 401 {"error": ..}} (an SSE client reads the body; logged and
 * counted as the WebSocket endpoint's refusals, {@link ConnectRefusals}). The channel is
 * then joined like a vsn 1.0.0 {@code phx_join} of {@code realtime:<topic>} with the token's
 * claims and the given postgres_changes bindings, so limits, registry entries, CDC status and
 * shutdown behave as for WebSocket clients; {@link SseEncoder} writes the events.
 * {@code Last-Event-ID} (header, or the {@code lastEventId} parameter for clients that cannot
 * set headers) travels with the join, which replays the broadcasts missed since that id.
 */
final class SseEndpoint {
    static final String PATH = "/realtime/v1/sse";
    /** join_ref and ref of the stream's one join. */
    static final String JOIN_REF = "1";

    private SseEndpoint() {}

    /** Answers the request: an HTTP error, or the stream (the router is replaced by the SSE pipeline). */
    static void open(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            QueryStringDecoder query,
            TransportContext context,
            boolean draining,
            FrontInitializer pipelines) {
        if (req.method() != HttpMethod.GET) {
            HttpRouter.respond(
                    ctx,
                    req,
                    HttpResponseStatus.METHOD_NOT_ALLOWED,
                    "application/json",
                    HttpRouter.error("GET expected"));
            return;
        }
        if (draining) {
            HttpRouter.respond(
                    ctx,
                    req,
                    HttpResponseStatus.SERVICE_UNAVAILABLE,
                    "application/json",
                    HttpRouter.error("Server is shutting down"));
            return;
        }
        String apikey = apikey(req, query);
        if (apikey == null || apikey.isBlank()) {
            pipelines.refusals().refused(ctx.channel(), ConnectRefusals.API_KEY_MISSING, "API key is missing", PATH);
            HttpRouter.respond(
                    ctx,
                    req,
                    HttpResponseStatus.UNAUTHORIZED,
                    "application/json",
                    HttpRouter.error("API key is missing"));
            return;
        }
        Verification.then(
                ctx,
                req,
                context.credentials().verify(apikey),
                claims -> open(ctx, req, query, context, pipelines, claims),
                e -> {
                    pipelines.refusals().refused(ctx.channel(), e.code(), e.reason(), PATH);
                    HttpRouter.respond(
                            ctx, req, Verification.status(e), "application/json", HttpRouter.error(e.getMessage()));
                });
    }

    private static void open(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            QueryStringDecoder query,
            TransportContext context,
            FrontInitializer pipelines,
            Claims claims) {
        String topic = HttpRouter.first(query, "topic");
        if (topic == null || topic.isEmpty()) {
            HttpRouter.respond(
                    ctx,
                    req,
                    HttpResponseStatus.BAD_REQUEST,
                    "application/json",
                    HttpRouter.error(Reasons.TOPIC_NAME_REQUIRED));
            return;
        }
        ArrayNode bindings;
        try {
            bindings = bindings(HttpRouter.first(query, "postgres_changes"), context);
        } catch (IllegalArgumentException e) {
            HttpRouter.respond(
                    ctx, req, HttpResponseStatus.BAD_REQUEST, "application/json", HttpRouter.error(e.getMessage()));
            return;
        }
        if (!HttpRouter.admitConnection(ctx, req, context, claims, pipelines.refusals())) {
            return;
        }
        String lastEventId = req.headers().get("Last-Event-ID");
        if (lastEventId == null || lastEventId.isBlank()) {
            lastEventId = HttpRouter.first(query, "lastEventId");
        }
        lastEventId = lastEventId == null || lastEventId.isBlank() ? null : lastEventId.strip();

        HttpResponse head = new DefaultHttpResponse(HttpVersion.HTTP_1_1, HttpResponseStatus.OK);
        head.headers()
                .set(HttpHeaderNames.CONTENT_TYPE, "text/event-stream; charset=utf-8")
                .set(HttpHeaderNames.CACHE_CONTROL, "no-cache")
                .set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE)
                .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*")
                .set("X-Accel-Buffering", "no");
        HttpUtil.setTransferEncodingChunked(head, true);
        ctx.writeAndFlush(head);

        ChannelPipeline p = ctx.pipeline();
        String joinFrom = pipelines.sse(p, ctx.name(), claims, topic);

        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        ObjectNode config = payload.putObject("config");
        config.putObject("broadcast").put("self", false).put("ack", false);
        config.putObject("presence").put("enabled", false);
        config.set("postgres_changes", bindings);
        p.context(joinFrom)
                .fireChannelRead(context.json().join(JOIN_REF, JOIN_REF, Topics.PREFIX + topic, payload, lastEventId));
    }

    private static String apikey(FullHttpRequest req, QueryStringDecoder query) {
        String key = HttpRouter.first(query, "apikey");
        if (key == null) {
            key = req.headers().get("apikey");
        }
        String auth = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        if (key == null && auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            key = auth.substring(7).strip();
        }
        return key;
    }

    private static ArrayNode bindings(String param, TransportContext context) {
        if (param == null || param.isBlank()) {
            return JsonNodeFactory.instance.arrayNode();
        }
        JsonNode parsed;
        try {
            parsed = context.json().mapper().readTree(param);
        } catch (Exception e) {
            throw new IllegalArgumentException("postgres_changes must be a JSON array of bindings");
        }
        if (parsed instanceof ObjectNode single) {
            return JsonNodeFactory.instance.arrayNode().add(single);
        }
        if (!(parsed instanceof ArrayNode array)) {
            throw new IllegalArgumentException("postgres_changes must be a JSON array of bindings");
        }
        return array;
    }
}
