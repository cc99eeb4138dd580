package dev.aura.realtime.front.transport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.broadcast.RestBroadcasts;
import dev.aura.realtime.front.protocol.Persist;
import dev.aura.realtime.front.protocol.Reasons;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.QueryStringDecoder;
import io.netty.handler.codec.http.ReadOnlyHttpHeaders;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * REST broadcast as realtime-js calls it (docs/design.md H3; protocol.md section 9):
 *
 * <ul>
 *   <li>{@code POST /realtime/v1/api/broadcast} with {@code {"messages":[{"topic","event","payload","private"}]}}
 *       (the REST fallback of {@code send()} on an unjoined channel);
 *   <li>{@code POST /realtime/v1/api/broadcast/<topic>/events/<event>[?private=true][&persist=true]}
 *       with a JSON body (the payload) or {@code application/octet-stream} ({@code httpSend()}).
 * </ul>
 *
 * Header {@code apikey} (required) and {@code Authorization: Bearer <jwt>} (the user's token, of
 * the same project; its claims authorise, else the apikey's). Answers 202 with an empty body, or
 * {@code {"error": ...}} with 400 (malformed), 401 (tokens), 403 (policy, {@code private_only}),
 * 404 (another path), 413 (payload, request size), 429 (the project's messages per second on this
 * replica), 503 (no cdc-worker answered a private check). Also served under {@code /api/broadcast}
 * (realtime-js's path for a socket URL without a path).
 *
 * <p>Browsers call it from the application's origin: every answer carries
 * {@code Access-Control-Allow-Origin: *} and a CORS preflight ({@code OPTIONS}) is answered 204
 * with the headers it asks for. The credentials are headers, never cookies, so no origin gains
 * anything it does not hold the tokens for.
 */
final class RestBroadcastEndpoint {
    static final String PATH = "/realtime/v1/api/broadcast";
    static final String ROOT_PATH = "/api/broadcast";

    private RestBroadcastEndpoint() {}

    static boolean matches(String path) {
        return path.equals(PATH)
                || path.startsWith(PATH + "/")
                || path.equals(ROOT_PATH)
                || path.startsWith(ROOT_PATH + "/");
    }

    static void handle(
            ChannelHandlerContext ctx, FullHttpRequest req, QueryStringDecoder query, TransportContext context) {
        if (req.method() == HttpMethod.OPTIONS) {
            preflight(ctx, req);
            return;
        }
        if (req.method() != HttpMethod.POST) {
            respond(ctx, req, HttpResponseStatus.METHOD_NOT_ALLOWED, "Method not allowed: use POST");
            return;
        }
        String apikey = req.headers().get("apikey");
        if (apikey == null || apikey.isBlank()) {
            respond(ctx, req, HttpResponseStatus.UNAUTHORIZED, "API key is missing");
            return;
        }
        CompletableFuture<Claims> key = context.credentials().verify(apikey);
        String auth = req.headers().get(HttpHeaderNames.AUTHORIZATION);
        CompletableFuture<Claims> check = key;
        if (auth != null && auth.regionMatches(true, 0, "Bearer ", 0, 7)) {
            // the user's token authorises, of the apikey's project (the apikey's error comes first)
            CompletableFuture<Claims> user =
                    context.credentials().verify(auth.substring(7).trim());
            check = key.thenCombine(user, (k, u) -> u.projectId().equals(k.projectId()) ? u : null);
        }
        Verification.then(
                ctx,
                req,
                check,
                claims -> {
                    if (claims == null) {
                        respond(ctx, req, HttpResponseStatus.UNAUTHORIZED, Reasons.PROJECT_MISMATCH);
                    } else {
                        send(ctx, req, query, context, claims);
                    }
                },
                e -> respond(ctx, req, Verification.status(e), e.getMessage()));
    }

    private static void send(
            ChannelHandlerContext ctx,
            FullHttpRequest req,
            QueryStringDecoder query,
            TransportContext context,
            Claims claims) {
        String raw = query.rawPath();
        String base = raw.startsWith(PATH) ? PATH : ROOT_PATH;
        String rest = raw.substring(base.length());
        List<RestBroadcasts.Message> messages;
        Persist persist = null;
        try {
            if (rest.isEmpty() || rest.equals("/")) {
                messages = batch(req, context.json().mapper());
            } else {
                String[] parts = rest.substring(1).split("/", -1);
                if (parts.length != 3 || !parts[1].equals("events")) {
                    respond(ctx, req, HttpResponseStatus.NOT_FOUND, "Not found");
                    return;
                }
                String topic = QueryStringDecoder.decodeComponent(parts[0]);
                String event = QueryStringDecoder.decodeComponent(parts[2]);
                boolean priv = "true".equals(HttpRouter.first(query, "private"));
                persist = Persist.ofQuery(HttpRouter.first(query, "persist"), HttpRouter.first(query, "persist[ttl]"));
                messages =
                        List.of(single(req, topic, event, priv, context.json().mapper()));
            }
        } catch (BadRequest e) {
            respond(ctx, req, e.status, e.getMessage());
            return;
        }
        req.retain();
        context.restBroadcasts()
                .send(claims, messages, persist)
                .whenComplete((result, err) -> ctx.executor().execute(() -> {
                    try {
                        if (err != null) {
                            respond(ctx, req, HttpResponseStatus.INTERNAL_SERVER_ERROR, "Internal error");
                        } else if (result.status() == 202) {
                            HttpRouter.respond(
                                    ctx,
                                    req,
                                    HttpResponseStatus.ACCEPTED,
                                    "application/json",
                                    Unpooled.EMPTY_BUFFER,
                                    CORS);
                        } else {
                            respond(ctx, req, HttpResponseStatus.valueOf(result.status()), result.error());
                        }
                    } finally {
                        req.release();
                    }
                }));
    }

    private static final class BadRequest extends Exception {
        final HttpResponseStatus status;

        BadRequest(String message) {
            this(HttpResponseStatus.BAD_REQUEST, message);
        }

        BadRequest(HttpResponseStatus status, String message) {
            super(message, null, false, false);
            this.status = status;
        }
    }

    /**
     * A body nested deeper than a payload may be (plus the batch's own levels) is refused before it
     * is parsed into a tree, as {@code 413 PayloadTooLarge} (docs/design.md C13).
     */
    private static void checkDepth(byte[] body, int envelope) throws BadRequest {
        if (WireJson.deeperThan(body, WireJson.MAX_VALUE_NESTING + envelope)) {
            throw new BadRequest(HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE, Reasons.PAYLOAD_TOO_DEEP);
        }
    }

    private static List<RestBroadcasts.Message> batch(FullHttpRequest req, ObjectMapper mapper) throws BadRequest {
        JsonNode body;
        byte[] raw = ByteBufUtil.getBytes(req.content());
        checkDepth(raw, 3); // {"messages": [{"payload": ...}]}
        try {
            body = mapper.readTree(raw);
        } catch (IOException e) {
            throw new BadRequest("the body is not JSON");
        }
        JsonNode list = body == null ? null : body.get("messages");
        if (list == null || !list.isArray()) {
            throw new BadRequest("messages must be a non-empty array of {topic, event, payload, private}");
        }
        List<RestBroadcasts.Message> out = new ArrayList<>();
        for (JsonNode m : list) {
            JsonNode topic = m.get("topic");
            JsonNode event = m.get("event");
            if (!m.isObject() || topic == null || !topic.isTextual() || event == null || !event.isTextual()) {
                throw new BadRequest("every message needs a string topic and a string event");
            }
            JsonNode payload = m.has("payload") ? m.get("payload") : mapper.createObjectNode();
            byte[] bytes;
            try {
                bytes = mapper.writeValueAsBytes(payload);
            } catch (IOException e) {
                throw new BadRequest("a payload is not serialisable");
            }
            String name = topic.asText();
            if (name.startsWith("realtime:")) {
                name = name.substring("realtime:".length());
            }
            out.add(new RestBroadcasts.Message(
                    name, event.asText(), bytes, true, m.path("private").asBoolean(false)));
        }
        return out;
    }

    private static RestBroadcasts.Message single(
            FullHttpRequest req, String topic, String event, boolean priv, ObjectMapper mapper) throws BadRequest {
        byte[] body = ByteBufUtil.getBytes(req.content());
        String type = req.headers().get(HttpHeaderNames.CONTENT_TYPE, "application/json");
        if (type.startsWith("application/octet-stream")) {
            return new RestBroadcasts.Message(topic, event, body, false, priv);
        }
        checkDepth(body, 0);
        try {
            JsonNode payload = mapper.readTree(body);
            if (payload == null || payload.isMissingNode()) {
                throw new BadRequest("the payload is required");
            }
            return new RestBroadcasts.Message(topic, event, mapper.writeValueAsBytes(payload), true, priv);
        } catch (IOException e) {
            throw new BadRequest("the body is not JSON (send binary payloads as application/octet-stream)");
        }
    }

    private static final HttpHeaders CORS =
            new ReadOnlyHttpHeaders(false, HttpHeaderNames.ACCESS_CONTROL_ALLOW_ORIGIN, "*");

    /** A CORS preflight: POST from any origin, with whatever headers it asks for (apikey, authorization, ...). */
    private static void preflight(ChannelHandlerContext ctx, FullHttpRequest req) {
        HttpHeaders allow = new DefaultHttpHeaders()
                .add(CORS)
                .set(HttpHeaderNames.ACCESS_CONTROL_ALLOW_METHODS, "POST, OPTIONS")
                .set(
                        HttpHeaderNames.ACCESS_CONTROL_ALLOW_HEADERS,
                        req.headers()
                                .get(
                                        HttpHeaderNames.ACCESS_CONTROL_REQUEST_HEADERS,
                                        "apikey, authorization, content-type, x-client-info"))
                .set(HttpHeaderNames.ACCESS_CONTROL_MAX_AGE, "86400");
        HttpRouter.respond(ctx, req, HttpResponseStatus.NO_CONTENT, "text/plain", Unpooled.EMPTY_BUFFER, allow);
    }

    private static void respond(
            ChannelHandlerContext ctx, FullHttpRequest req, HttpResponseStatus status, String error) {
        HttpRouter.respond(
                ctx,
                req,
                status,
                "application/json",
                Unpooled.copiedBuffer(HttpRouter.error(error), StandardCharsets.UTF_8),
                CORS);
    }
}
