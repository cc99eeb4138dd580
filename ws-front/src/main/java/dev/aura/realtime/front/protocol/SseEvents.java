package dev.aura.realtime.front.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.nio.charset.StandardCharsets;

/**
 * The {@code text/event-stream} form of server frames (docs/design.md D7): one event per Phoenix
 * push or reply, {@code event:} the Phoenix event, {@code data:} its payload JSON on one line.
 * Broadcasts also carry {@code id:} = their message id, so a reconnecting {@code EventSource}
 * sends it back as {@code Last-Event-ID}; other events carry none, which per the SSE rules keeps
 * the last broadcast id as the one to resume from.
 *
 * <p>An event must not contain a line break inside a field (it would start a new field): field
 * values are cut to one line, and JSON payload bytes received from clients or other replicas may
 * carry CR or LF only as whitespace between tokens (JSON strings cannot hold them raw), which is
 * written as a space.
 */
public final class SseEvents {
    /** The keep-alive comment written every {@code SSE_HEARTBEAT_MS}. */
    public static final String HEARTBEAT = ": heartbeat\n\n";

    private SseEvents() {}

    /** One event with a ready one-line JSON {@code data}; {@code id} may be null. */
    public static String event(String id, String event, String dataJson) {
        return head(id, event) + dataJson + "\n\n";
    }

    /**
     * One event whose data is {@code prefix}, then {@code shared} (ready JSON bytes of one line,
     * not copied, not released), then {@code suffix}.
     */
    static ByteBuf eventWithSharedData(
            String id, String event, String prefix, ByteBuf shared, String suffix, ByteBufAllocator alloc) {
        byte[] h = (head(id, event) + prefix).getBytes(StandardCharsets.UTF_8);
        byte[] t = (suffix + "\n\n").getBytes(StandardCharsets.UTF_8);
        ByteBuf out = alloc.buffer(h.length + shared.readableBytes() + t.length);
        return out.writeBytes(h)
                .writeBytes(shared, shared.readerIndex(), shared.readableBytes())
                .writeBytes(t);
    }

    /** {@code json} itself when it holds no CR or LF, else a copy with each written as a space. */
    static byte[] oneLine(byte[] json) {
        byte[] out = null;
        for (int i = 0; i < json.length; i++) {
            if (json[i] == '\r' || json[i] == '\n') {
                if (out == null) {
                    out = json.clone();
                }
                out[i] = ' ';
            }
        }
        return out == null ? json : out;
    }

    private static String head(String id, String event) {
        StringBuilder sb = new StringBuilder(64);
        if (id != null) {
            sb.append("id: ").append(field(id)).append('\n');
        }
        return sb.append("event: ").append(field(event)).append("\ndata: ").toString();
    }

    /** Field values must not contain line breaks (they would start a new field). */
    private static String field(String s) {
        return s.replace('\r', ' ').replace('\n', ' ');
    }
}
