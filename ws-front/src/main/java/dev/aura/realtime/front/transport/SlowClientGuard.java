package dev.aura.realtime.front.transport;

import dev.aura.realtime.front.channel.ChannelRouter;
import io.netty.channel.ChannelDuplexHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.util.concurrent.ScheduledFuture;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Drops a client that stays unwritable (outbound bytes above the high water mark) for longer
 * than the slow-client timeout; the hard byte cap is enforced per write by the session. Event
 * loop only.
 */
final class SlowClientGuard extends ChannelDuplexHandler {
    private final Duration timeout;
    private ScheduledFuture<?> timer;

    SlowClientGuard(Duration timeout) {
        this.timeout = timeout;
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        if (!ctx.channel().isWritable()) {
            if (timer == null) {
                timer = ctx.executor().schedule(() -> expire(ctx), timeout.toMillis(), TimeUnit.MILLISECONDS);
            }
        } else if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        super.channelWritabilityChanged(ctx);
    }

    private void expire(ChannelHandlerContext ctx) {
        timer = null;
        if (ctx.channel().isActive() && !ctx.channel().isWritable()) {
            ChannelRouter router = ctx.pipeline().get(ChannelRouter.class);
            if (router != null && router.session() != null) {
                router.session().dropSlowClient();
            } else {
                ctx.close();
            }
        }
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
        }
    }
}
