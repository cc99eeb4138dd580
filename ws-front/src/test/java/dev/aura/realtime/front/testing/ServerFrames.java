package dev.aura.realtime.front.testing;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.nio.charset.StandardCharsets;

/**
 * Reads what a server pipeline wrote as WebSocket messages: frames the Phoenix codec produced
 * ({@link WebSocketFrame}s, encoded later by the WebSocket encoder) and the fan-out's shared frames,
 * written as complete server frame bytes from the pipeline's head. Checks the wire format of the
 * latter as a client would: FIN set, no RSV bits, no mask, the length matching the bytes.
 */
public final class ServerFrames {
    private ServerFrames() {}

    /** One message: {@code text} for text frames, {@code bytes} for both kinds. */
    public record Message(boolean binary, byte[] bytes) {
        public String text() {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    }

    /** Decodes and releases {@code written} (a WebSocketFrame or raw frame bytes). */
    public static Message read(Object written) {
        try {
            if (written instanceof TextWebSocketFrame t) {
                return new Message(false, ByteBufUtil.getBytes(t.content()));
            }
            if (written instanceof BinaryWebSocketFrame b) {
                return new Message(true, ByteBufUtil.getBytes(b.content()));
            }
            if (written instanceof ByteBuf raw) {
                return decode(raw);
            }
            throw new AssertionError("not a WebSocket message: " + written);
        } finally {
            io.netty.util.ReferenceCountUtil.release(written);
        }
    }

    /** A complete unmasked server frame (not released). */
    public static Message decode(ByteBuf raw) {
        ByteBuf b = raw.duplicate();
        int b0 = b.readUnsignedByte();
        int b1 = b.readUnsignedByte();
        if ((b0 & 0x80) == 0 || (b0 & 0x70) != 0) {
            throw new AssertionError("expected FIN and no RSV bits, got first byte " + Integer.toHexString(b0));
        }
        if ((b1 & 0x80) != 0) {
            throw new AssertionError("server frames must not be masked");
        }
        long length = b1 & 0x7F;
        if (length == 126) {
            length = b.readUnsignedShort();
        } else if (length == 127) {
            length = b.readLong();
        }
        if (length != b.readableBytes()) {
            throw new AssertionError("frame says " + length + " payload bytes, carries " + b.readableBytes());
        }
        int opcode = b0 & 0x0F;
        if (opcode != 1 && opcode != 2) {
            throw new AssertionError("expected a text or binary frame, got opcode " + opcode);
        }
        return new Message(opcode == 2, ByteBufUtil.getBytes(b));
    }
}
