package dev.aura.realtime.front.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * Complete server frames as bytes, so one encoding serves every socket of a fan-out without a
 * per-socket encoder (docs/design.md D2): what {@code WebSocket08FrameEncoder} writes for an
 * unmasked server frame, and what Netty's HTTP encoder writes for one chunk of a chunked response.
 *
 * <ul>
 *   <li>WebSocket (RFC 6455 5.2): {@code FIN|opcode}, then the payload length in 7 bits, or 126 and
 *       16 bits, or 127 and 64 bits (network order), no mask, then the payload. ws-front offers no
 *       extension in its handshake ({@code allowExtensions = false}), so no permessage-deflate can be
 *       negotiated and RSV bits stay 0: the same bytes are valid on every socket.
 *   <li>SSE: {@code <length in hex>\r\n<events>\r\n}, one chunk of the {@code Transfer-Encoding:
 *       chunked} response the SSE endpoint started.
 * </ul>
 *
 * Frames are direct buffers (no copy on the way to the socket); the payload is copied in once.
 */
public final class WireFrames {
    private static final int OPCODE_TEXT = 0x1;
    private static final int OPCODE_BINARY = 0x2;
    private static final int FIN = 0x80;
    private static final byte[] CRLF = {'\r', '\n'};

    private WireFrames() {}

    /** A WebSocket frame around {@code payload} (released here). */
    public static OutFrame webSocket(OutFrame.Kind kind, ByteBuf payload, ByteBufAllocator alloc) {
        try {
            int length = payload.readableBytes();
            int header = length < 126 ? 2 : length <= 0xFFFF ? 4 : 10;
            ByteBuf out = alloc.directBuffer(header + length);
            out.writeByte(FIN | (kind == OutFrame.Kind.BINARY ? OPCODE_BINARY : OPCODE_TEXT));
            if (length < 126) {
                out.writeByte(length);
            } else if (length <= 0xFFFF) {
                out.writeByte(126).writeShort(length);
            } else {
                out.writeByte(127).writeLong(length);
            }
            out.writeBytes(payload, payload.readerIndex(), length);
            return new OutFrame(out, header, length, kind);
        } finally {
            payload.release();
        }
    }

    /** One HTTP chunk holding {@code events} (whole SSE events; released here). */
    public static OutFrame sseChunk(ByteBuf events, ByteBufAllocator alloc) {
        try {
            int length = events.readableBytes();
            byte[] head = (Integer.toHexString(length) + "\r\n").getBytes(StandardCharsets.US_ASCII);
            ByteBuf out = alloc.directBuffer(head.length + length + CRLF.length);
            out.writeBytes(head)
                    .writeBytes(events, events.readerIndex(), length)
                    .writeBytes(CRLF);
            return new OutFrame(out, head.length, length, OutFrame.Kind.SSE);
        } finally {
            events.release();
        }
    }
}
