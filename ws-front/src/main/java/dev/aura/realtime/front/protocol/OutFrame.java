package dev.aura.realtime.front.protocol;

import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;

/**
 * One server frame shared by many connections, built once per (message, framing) as the complete
 * bytes the socket carries ({@link WireFrames}): a WebSocket frame with its header (server frames
 * are never masked, and ws-front negotiates no extension, so no per-socket compression) or an HTTP
 * chunk holding SSE events. Each recipient writes {@link #retainedWire()} at the head of its
 * pipeline, past every encoder; the owner releases the frame once with {@link #release()}.
 *
 * @param wire the bytes to put on the socket, from {@code readerIndex} to {@code writerIndex}
 * @param payloadOffset where the payload (the WebSocket message, or the SSE events) starts in {@code wire}
 * @param payloadLength its length
 * @param kind what the payload is
 */
public record OutFrame(ByteBuf wire, int payloadOffset, int payloadLength, Kind kind) {
    /** What a frame carries. */
    public enum Kind {
        /** A WebSocket text frame (Phoenix JSON). */
        TEXT,
        /** A WebSocket binary frame (vsn 2.0.0 user broadcast). */
        BINARY,
        /** A chunk of an SSE response: whole {@code text/event-stream} events. */
        SSE
    }

    /** The bytes for one more socket: an independent view of {@link #wire()}; the caller owns one reference. */
    public ByteBuf retainedWire() {
        return wire.retainedDuplicate();
    }

    /** Bytes on the socket. */
    public int size() {
        return wire.readableBytes();
    }

    /** The payload without the WebSocket header or chunk framing (a view: not retained). */
    public ByteBuf payload() {
        return wire.slice(wire.readerIndex() + payloadOffset, payloadLength);
    }

    /** The payload as text (for logs and tests). */
    public String payloadText() {
        return payload().toString(StandardCharsets.UTF_8);
    }

    /** Takes one more reference (a holder that outlives the creator's). */
    public OutFrame retain() {
        wire.retain();
        return this;
    }

    public void release() {
        wire.release();
    }

    public int refCnt() {
        return wire.refCnt();
    }
}
