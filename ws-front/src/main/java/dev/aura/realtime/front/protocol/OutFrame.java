package dev.aura.realtime.front.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufHolder;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;

/**
 * One encoded server frame shared by many connections: encode once per (channel, framing), then
 * {@link #retainedFrame()} per recipient. The owner releases {@link #content()} once.
 *
 * @param content the frame body
 * @param kind what {@link #retainedFrame()} wraps the body in
 */
public record OutFrame(ByteBuf content, Kind kind) {
    /** The message type a frame is written as. */
    public enum Kind {
        /** A WebSocket text frame. */
        TEXT,
        /** A WebSocket binary frame. */
        BINARY,
        /** A chunk of an SSE response: whole {@code text/event-stream} events. */
        SSE
    }

    /** A new message sharing {@link #content()}; the caller owns one reference. */
    public ByteBufHolder retainedFrame() {
        ByteBuf dup = content.retainedDuplicate();
        return switch (kind) {
            case TEXT -> new TextWebSocketFrame(dup);
            case BINARY -> new BinaryWebSocketFrame(dup);
            case SSE -> new DefaultHttpContent(dup);
        };
    }

    public void release() {
        content.release();
    }
}
