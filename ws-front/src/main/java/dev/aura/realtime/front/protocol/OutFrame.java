package dev.aura.realtime.front.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;

/**
 * One encoded server frame shared by many connections: encode once per (channel, vsn), then
 * {@link #retainedFrame()} per recipient. The owner releases {@link #content()} once.
 *
 * @param content the frame body
 * @param binary true for a binary frame, false for text
 */
public record OutFrame(ByteBuf content, boolean binary) {
    /** A new WebSocket frame sharing {@link #content()}; the caller owns one reference. */
    public WebSocketFrame retainedFrame() {
        ByteBuf dup = content.retainedDuplicate();
        return binary ? new BinaryWebSocketFrame(dup) : new TextWebSocketFrame(dup);
    }

    public void release() {
        content.release();
    }
}
