package dev.aura.realtime.front.transport;

import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.metrics.FrontMetrics.Timeout;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.ContinuationWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Netty's WebSocket message aggregator, bounded in bytes and in time. One frame longer than
 * {@code WS_MAX_FRAME_BYTES} is refused by the frame decoder from its length field, before any
 * allocation (close 1009); this bounds the sum of a fragmented message's frames the same way
 * (close 1009, where Netty's aggregator would only fire an exception), and a fragmented message
 * must end (a continuation frame with FIN) within {@code WS_FRAGMENT_TIMEOUT_MS} of its first
 * frame, else close 1008: control frames and further fragments keep the idle timeout from firing,
 * so without it a client could hold up to the byte bound in this buffer forever. Event loop only.
 */
final class WebSocketMessageBounds extends WebSocketFrameAggregator {
    private static final Logger log = LoggerFactory.getLogger(WebSocketMessageBounds.class);

    private final int maxBytes;
    private final Duration fragmentTimeout;
    private final FrontMetrics metrics;
    private ScheduledFuture<?> timer;
    private boolean closing;

    WebSocketMessageBounds(int maxBytes, Duration fragmentTimeout, FrontMetrics metrics) {
        super(maxBytes);
        this.maxBytes = maxBytes;
        this.fragmentTimeout = fragmentTimeout;
        this.metrics = metrics;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, WebSocketFrame msg, List<Object> out) throws Exception {
        boolean starts =
                (msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame) && !msg.isFinalFragment();
        boolean ends = msg instanceof ContinuationWebSocketFrame && msg.isFinalFragment();
        if (starts && timer == null) {
            timer = ctx.executor().schedule(() -> expire(ctx), fragmentTimeout.toMillis(), TimeUnit.MILLISECONDS);
        } else if (ends) {
            cancel();
        }
        super.decode(ctx, msg, out);
    }

    private void expire(ChannelHandlerContext ctx) {
        timer = null;
        if (!ctx.channel().isActive()) {
            return;
        }
        metrics.timedOut(Timeout.WS_FRAGMENT);
        log.debug("closing {}: fragmented message open for {} ms", ctx.channel().id(), fragmentTimeout.toMillis());
        close(
                ctx,
                WebSocketCloseStatus.POLICY_VIOLATION,
                "fragmented message not completed within " + fragmentTimeout.toMillis() + " ms");
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, WebSocketFrame oversized) {
        cancel();
        log.debug("closing {}: fragmented message over {} bytes", ctx.channel().id(), maxBytes);
        close(ctx, WebSocketCloseStatus.MESSAGE_TOO_BIG, "message larger than " + maxBytes + " bytes");
    }

    private void close(ChannelHandlerContext ctx, WebSocketCloseStatus status, String reason) {
        if (!closing) {
            closing = true;
            ctx.writeAndFlush(new CloseWebSocketFrame(status, reason)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    private void cancel() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cancel();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) throws Exception {
        cancel();
        super.handlerRemoved(ctx);
    }
}
