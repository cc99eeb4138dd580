package dev.aura.realtime.front.transport;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelConfig;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import java.util.concurrent.TimeUnit;

/**
 * One read per socket per turn of its event loop (docs/design.md D8). While a socket has more data,
 * Netty reads it again from a task of the same turn, and a turn runs its tasks for up to a second
 * (looking at the clock only every 64 tasks) before it serves the other sockets' I/O: one socket
 * that kept its receive buffer full (10,000 joins in one burst) held its loop, and every socket on
 * it, for seconds. After a read that filled its buffer (so more may be waiting; each read is at
 * most {@link FrontServer#MAX_READ_BYTES}), this handler stops reading the socket and resumes it
 * from a scheduled task, which Netty runs in the next turn, after the other sockets' I/O.
 *
 * <p>One per socket, first inbound handler after {@code wire}; event loop only.
 */
final class FairReads extends ChannelInboundHandlerAdapter {
    static final String NAME = "fair-reads";

    private boolean filled;

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof ByteBuf buf && !buf.isWritable()) {
            filled = true;
        }
        ctx.fireChannelRead(msg);
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        ChannelConfig config = ctx.channel().config();
        if (filled && config.isAutoRead()) {
            config.setAutoRead(false);
            ctx.executor().schedule(() -> config.setAutoRead(true), 0, TimeUnit.NANOSECONDS);
        }
        filled = false;
        ctx.fireChannelReadComplete();
    }
}
