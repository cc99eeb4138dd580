package dev.aura.realtime.front.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PongWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.timeout.IdleStateEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WebSocket control frames (ping answered with pong, close completes the closing handshake,
 * pong ignored) and the idle timeout: a socket without any inbound frame for the idle period
 * is closed with 1001 (realtime-js heartbeats every 25 s, so a live client never idles).
 */
final class WebSocketControlHandler extends ChannelInboundHandlerAdapter {
    private static final Logger log = LoggerFactory.getLogger(WebSocketControlHandler.class);

    private final WebSocketServerHandshaker handshaker;

    WebSocketControlHandler(WebSocketServerHandshaker handshaker) {
        this.handshaker = handshaker;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (msg instanceof CloseWebSocketFrame close) {
            handshaker.close(ctx.channel(), close);
        } else if (msg instanceof PingWebSocketFrame ping) {
            ctx.writeAndFlush(new PongWebSocketFrame(ping.content()));
        } else if (msg instanceof PongWebSocketFrame pong) {
            pong.release();
        } else {
            ctx.fireChannelRead(msg);
        }
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
        if (evt instanceof IdleStateEvent) {
            log.debug("closing idle socket {}", ctx.channel().id());
            handshaker.close(
                    ctx.channel(), new CloseWebSocketFrame(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE, "idle timeout"));
        } else {
            super.userEventTriggered(ctx, evt);
        }
    }
}
