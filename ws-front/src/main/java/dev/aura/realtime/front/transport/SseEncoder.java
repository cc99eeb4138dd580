package dev.aura.realtime.front.transport;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.front.channel.Reasons;
import dev.aura.realtime.front.history.HistoryStore;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.UserBroadcast;
import io.netty.buffer.ByteBufInputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns what the channel layer writes for one SSE subscriber (Phoenix replies and pushes, and
 * the vsn 1.0.0 JSON frames of broadcasts and postgres changes shared with WebSocket clients)
 * into {@code text/event-stream} events: {@code event:} is the Phoenix event, {@code data:} its
 * payload JSON on one line, and broadcasts carry {@code id:} = their message id, so a
 * reconnecting {@code EventSource} sends it back as {@code Last-Event-ID}. Other events carry no
 * {@code id:}, which per the SSE rules keeps the last broadcast id as the one to resume from.
 *
 * <p>After the join's ok reply, the history after {@code Last-Event-ID} is replayed
 * ({@code meta.replayed = true}), or {@code event: reset} is sent when that id is no longer in
 * history. {@code phx_close}, an error join reply or the server's close end the stream. A
 * comment line is written every heartbeat period. Event loop only; not sharable.
 */
final class SseEncoder extends ChannelDuplexHandler {
    private static final Logger log = LoggerFactory.getLogger(SseEncoder.class);

    private final ObjectMapper mapper;
    private final HistoryStore history;
    private final Clock clock;
    private final String projectId;
    private final String channel;
    private final String joinRef;
    private final String lastEventId;
    private final long heartbeatMs;
    private final Set<String> replayedIds = new HashSet<>();
    private ScheduledFuture<?> heartbeat;
    private boolean ended;

    SseEncoder(
            ObjectMapper mapper,
            HistoryStore history,
            Clock clock,
            String projectId,
            String channel,
            String joinRef,
            String lastEventId,
            long heartbeatMs) {
        this.mapper = mapper;
        this.history = history;
        this.clock = clock;
        this.projectId = projectId;
        this.channel = channel;
        this.joinRef = joinRef;
        this.lastEventId = lastEventId;
        this.heartbeatMs = heartbeatMs;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        heartbeat = ctx.executor()
                .scheduleAtFixedRate(
                        () -> {
                            if (!ended && ctx.channel().isActive()) {
                                ctx.writeAndFlush(text(": heartbeat\n\n"));
                            }
                        },
                        heartbeatMs,
                        heartbeatMs,
                        TimeUnit.MILLISECONDS);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
    }

    @Override
    public void write(ChannelHandlerContext ctx, Object msg, ChannelPromise promise) {
        if (ended) {
            ReferenceCountUtil.release(msg);
            promise.trySuccess();
            return;
        }
        try {
            switch (msg) {
                case PhoenixMessage.Reply r -> reply(ctx, r, promise);
                case PhoenixMessage.Push p -> push(ctx, p.event(), p.payload(), promise);
                case TextWebSocketFrame f -> frame(ctx, f, promise);
                case CloseWebSocketFrame c -> {
                    c.release();
                    end(ctx, promise);
                }
                case WebSocketFrame other -> { // binary broadcasts: never produced for a vsn 1.0.0 session
                    other.release();
                    promise.trySuccess();
                }
                default -> ctx.write(msg, promise);
            }
        } catch (IOException | RuntimeException e) {
            log.warn("[SseEncodeFailed] {}: {}", channel, e.toString());
            promise.trySuccess();
        }
    }

    private void reply(ChannelHandlerContext ctx, PhoenixMessage.Reply r, ChannelPromise promise) throws IOException {
        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        payload.put("status", r.status());
        payload.set("response", r.response());
        ctx.write(event(null, "phx_reply", payload), promise);
        if (!joinRef.equals(r.ref())) {
            return;
        }
        if (!"ok".equals(r.status())) {
            end(ctx, ctx.newPromise());
            return;
        }
        if (lastEventId != null) {
            replay(ctx);
        }
    }

    private void replay(ChannelHandlerContext ctx) throws IOException {
        Optional<List<HistoryStore.Entry>> missed = history.after(projectId, channel, lastEventId, clock.millis());
        if (missed.isEmpty()) {
            ObjectNode reset = JsonNodeFactory.instance.objectNode();
            reset.put("reason", Reasons.HISTORY_GAP);
            reset.put("last_event_id", lastEventId);
            ctx.write(event(null, "reset", reset));
            return;
        }
        for (HistoryStore.Entry e : missed.get()) {
            UserBroadcast m = e.message();
            if (!m.json()) {
                continue; // binary payloads have no SSE form
            }
            replayedIds.add(m.id());
            String data = "{\"type\":\"broadcast\",\"event\":" + mapper.writeValueAsString(m.event()) + ",\"payload\":"
                    + new String(m.payload(), StandardCharsets.UTF_8) + ",\"meta\":{\"replayed\":true,\"id\":"
                    + mapper.writeValueAsString(m.id()) + "}}";
            ctx.write(text("id: " + sseLine(m.id()) + "\nevent: broadcast\ndata: " + data + "\n\n"));
        }
    }

    private void push(ChannelHandlerContext ctx, String event, JsonNode payload, ChannelPromise promise)
            throws IOException {
        ctx.write(event(null, event, payload), promise);
        if ("phx_close".equals(event)) {
            end(ctx, ctx.newPromise());
        }
    }

    private void frame(ChannelHandlerContext ctx, TextWebSocketFrame f, ChannelPromise promise) throws IOException {
        JsonNode message;
        try {
            message = mapper.readTree((java.io.InputStream) new ByteBufInputStream(f.content()));
        } finally {
            f.release();
        }
        String event = message.path("event").asText();
        JsonNode payload = message.path("payload");
        String id = null;
        if ("broadcast".equals(event)) {
            id = payload.path("meta").path("id").asText(null);
            if (id != null && replayedIds.contains(id)) {
                promise.trySuccess(); // already sent by the replay
                return;
            }
        }
        if ("phx_close".equals(event)) {
            push(ctx, event, payload, promise);
            return;
        }
        ctx.write(event(id, event, payload), promise);
    }

    private void end(ChannelHandlerContext ctx, ChannelPromise promise) {
        if (ended) {
            promise.trySuccess();
            return;
        }
        ended = true;
        if (heartbeat != null) {
            heartbeat.cancel(false);
        }
        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT, promise).addListener(ChannelFutureListener.CLOSE);
    }

    private DefaultHttpContent event(String id, String event, JsonNode payload) throws IOException {
        StringBuilder sb = new StringBuilder(128);
        if (id != null) {
            sb.append("id: ").append(sseLine(id)).append('\n');
        }
        sb.append("event: ").append(sseLine(event)).append('\n');
        sb.append("data: ").append(mapper.writeValueAsString(payload)).append("\n\n");
        return text(sb.toString());
    }

    /** Field values must not contain line breaks (they would start a new field). */
    private static String sseLine(String s) {
        return s.replace('\r', ' ').replace('\n', ' ');
    }

    private static DefaultHttpContent text(String s) {
        return new DefaultHttpContent(Unpooled.copiedBuffer(s, StandardCharsets.UTF_8));
    }
}
