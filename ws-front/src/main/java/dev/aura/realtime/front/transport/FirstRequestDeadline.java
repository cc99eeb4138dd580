package dev.aura.realtime.front.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.HttpRequest;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Closes a connection whose first HTTP request head has not arrived within the deadline, then
 * removes itself. Without it a client that opens TCP connections and dribbles request bytes
 * (slowloris) holds a file descriptor forever: the WebSocket idle timeout only starts after the
 * upgrade, and SSE responses must not get a read timeout at all. Runs on the channel's event loop.
 */
final class FirstRequestDeadline extends ChannelInboundHandlerAdapter {
    private final Duration deadline;
    private ScheduledFuture<?> timer;

    FirstRequestDeadline(Duration deadline) {
        this.deadline = deadline;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        timer = ctx.executor()
                .schedule(
                        () -> {
                            ctx.channel().close();
                        },
                        deadline.toMillis(),
                        TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof HttpRequest) {
            timer.cancel(false);
            ctx.pipeline().remove(this);
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
        }
    }
}
