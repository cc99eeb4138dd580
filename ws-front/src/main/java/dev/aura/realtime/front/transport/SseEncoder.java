package dev.aura.realtime.front.transport;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.front.channel.ChannelRouter;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.SseEvents;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelPromise;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes what the channel layer sends one SSE subscriber as {@code text/event-stream} events
 * ({@link SseEvents}): Phoenix replies and pushes are encoded here; broadcasts and postgres
 * changes are written by the fan-out as complete HTTP chunks of SSE events from the pipeline's
 * head (the session's framing is {@code SSE}) and never pass here. {@code phx_close}, an error reply to the join or the
 * server's close end the stream. A comment line is written every heartbeat period. Event loop
 * only; not sharable.
 */
final class SseEncoder extends ChannelDuplexHandler {
    private static final Logger log = LoggerFactory.getLogger(SseEncoder.class);

    private final ObjectMapper mapper;
    private final String channel;
    private final String joinRef;
    private final long heartbeatMs;
    private ScheduledFuture<?> heartbeat;
    private boolean ended;

    /**
     * @param channel the channel name (for logs)
     * @param joinRef the ref of the stream's join, whose error reply ends the stream
     */
    SseEncoder(ObjectMapper mapper, String channel, String joinRef, long heartbeatMs) {
        this.mapper = mapper;
        this.channel = channel;
        this.joinRef = joinRef;
        this.heartbeatMs = heartbeatMs;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        heartbeat = ctx.executor()
                .scheduleAtFixedRate(
                        () -> {
                            if (!ended && ctx.channel().isActive()) {
                                ctx.writeAndFlush(text(SseEvents.HEARTBEAT));
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
                case CloseWebSocketFrame c -> {
                    c.release();
                    end(ctx, promise);
                }
                case WebSocketFrame other -> { // never produced for an SSE session: nothing to send
                    other.release();
                    promise.trySuccess();
                }
                default -> ctx.write(msg, promise); // the response head, the last chunk
            }
        } catch (JsonProcessingException e) {
            LogCode.SseEncodeFailed.warn(log, "{}: {}", channel, e.toString());
            promise.tryFailure(e);
        }
    }

    private void reply(ChannelHandlerContext ctx, PhoenixMessage.Reply r, ChannelPromise promise)
            throws JsonProcessingException {
        ObjectNode payload = JsonNodeFactory.instance.objectNode();
        payload.put("status", r.status());
        payload.set("response", r.response());
        ctx.write(event("phx_reply", payload), promise);
        if (joinRef.equals(r.ref()) && !"ok".equals(r.status())) {
            end(ctx, ctx.newPromise());
        }
    }

    private void push(ChannelHandlerContext ctx, String event, JsonNode payload, ChannelPromise promise)
            throws JsonProcessingException {
        ctx.write(event(event, payload), promise);
        if ("phx_close".equals(event)) {
            end(ctx, ctx.newPromise());
        }
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
        ChannelRouter router = ctx.pipeline().get(ChannelRouter.class);
        if (router != null && router.session() != null) {
            router.session().endOutput(); // shared chunks bypass this handler: stop them at the session
        }
        ctx.writeAndFlush(LastHttpContent.EMPTY_LAST_CONTENT, promise).addListener(ChannelFutureListener.CLOSE);
    }

    private DefaultHttpContent event(String event, JsonNode payload) throws JsonProcessingException {
        return text(SseEvents.event(null, event, mapper.writeValueAsString(payload)));
    }

    private static DefaultHttpContent text(String s) {
        return new DefaultHttpContent(Unpooled.copiedBuffer(s, StandardCharsets.UTF_8));
    }
}
