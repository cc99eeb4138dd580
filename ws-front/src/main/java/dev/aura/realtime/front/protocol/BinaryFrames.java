package dev.aura.realtime.front.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The binary broadcast frames of vsn 2.0.0 ({@code lib/serializer.ts} of realtime-js). All
 * lengths are single unsigned bytes, so each string field is at most 255 bytes.
 *
 * <pre>
 * kind 3, client to server ("user broadcast push"):
 *   3 | join_ref_len | ref_len | topic_len | event_len | metadata_len | encoding |
 *   join_ref | ref | topic | event | metadata (JSON) | payload
 * kind 4, server to client ("user broadcast"):
 *   4 | topic_len | event_len | metadata_len | encoding | topic | event | metadata | payload
 * encoding: 0 binary payload, 1 JSON payload
 * </pre>
 *
 * <p>realtime-js writes header strings with {@code charCodeAt}, one byte per UTF-16 unit, so a
 * non-ASCII topic arrives as Latin-1; strings that are not valid UTF-8 are therefore read as
 * ISO-8859-1, which gives back what the client had for every Latin-1 character.
 */
public final class BinaryFrames {
    public static final int KIND_USER_BROADCAST_PUSH = 3;
    public static final int KIND_USER_BROADCAST = 4;
    public static final int ENCODING_BINARY = 0;
    public static final int ENCODING_JSON = 1;
    private static final int PUSH_HEADER = 7;
    private static final int MAX_FIELD = 255;

    private final JsonFrames json;

    public BinaryFrames(JsonFrames json) {
        this.json = json;
    }

    /** Decodes a client binary frame; never throws, never retains {@code frame}. */
    public PhoenixMessage.Inbound decode(ByteBuf frame) {
        int start = frame.readerIndex();
        int size = frame.readableBytes();
        if (size < 1) {
            return new PhoenixMessage.Malformed(null, null, null, "empty binary frame");
        }
        int kind = frame.getUnsignedByte(start);
        if (kind != KIND_USER_BROADCAST_PUSH) {
            return new PhoenixMessage.Malformed(null, null, null, "unsupported binary frame kind " + kind);
        }
        if (size < PUSH_HEADER) {
            return new PhoenixMessage.Malformed(null, null, null, "truncated user broadcast header");
        }
        int joinRefLen = frame.getUnsignedByte(start + 1);
        int refLen = frame.getUnsignedByte(start + 2);
        int topicLen = frame.getUnsignedByte(start + 3);
        int eventLen = frame.getUnsignedByte(start + 4);
        int metaLen = frame.getUnsignedByte(start + 5);
        int encoding = frame.getUnsignedByte(start + 6);
        int fields = joinRefLen + refLen + topicLen + eventLen + metaLen;
        if (size < PUSH_HEADER + fields) {
            return new PhoenixMessage.Malformed(null, null, null, "user broadcast lengths exceed the frame");
        }
        int at = start + PUSH_HEADER;
        String joinRef = text(frame, at, joinRefLen);
        at += joinRefLen;
        String ref = text(frame, at, refLen);
        at += refLen;
        String topic = text(frame, at, topicLen);
        at += topicLen;
        String event = text(frame, at, eventLen);
        at += eventLen;
        // metadata: only keys the client allow-lists ({"persist": true} or {"persist": {"ttl": s}}); not forwarded
        Persist persist = metaLen > 0 ? persistRequested(text(frame, at, metaLen)) : null;
        at += metaLen;
        byte[] payload = new byte[start + size - at];
        frame.getBytes(at, payload);
        joinRef = joinRef.isEmpty() ? null : joinRef;
        ref = ref.isEmpty() ? null : ref;
        if (encoding == ENCODING_JSON) {
            if (!json.isSingleJsonValue(payload)) {
                return new PhoenixMessage.Malformed(joinRef, ref, topic, "user broadcast payload is not JSON");
            }
        } else if (encoding != ENCODING_BINARY) {
            return new PhoenixMessage.Malformed(joinRef, ref, topic, "unknown payload encoding " + encoding);
        }
        return new PhoenixMessage.BroadcastPush(
                joinRef, ref, topic, new UserBroadcast(event, payload, encoding == ENCODING_JSON, null), persist);
    }

    /** What a kind 3 frame's metadata says of {@code persist}; unreadable metadata says nothing (null). */
    private Persist persistRequested(String metadata) {
        try {
            return Persist.of(json.mapper().readTree(metadata).get("persist"));
        } catch (IOException e) {
            return null;
        }
    }

    /**
     * Encodes a kind 4 frame as realtime-js decodes it into
     * {@code {type: "broadcast", event, payload, meta}}.
     *
     * @param metaJson the metadata JSON, e.g. {@code {"id":".."}} or {@code {"replayed":true,"id":".."}}; empty for none
     * @return the frame, or null when topic, event or metadata exceed 255 UTF-8 bytes
     */
    public ByteBuf encodeUserBroadcast(String topic, UserBroadcast message, String metaJson, ByteBufAllocator alloc) {
        byte[] t = topic.getBytes(StandardCharsets.UTF_8);
        byte[] e = message.event().getBytes(StandardCharsets.UTF_8);
        byte[] m = metaJson.getBytes(StandardCharsets.UTF_8);
        if (t.length > MAX_FIELD || e.length > MAX_FIELD || m.length > MAX_FIELD) {
            return null;
        }
        ByteBuf out = alloc.buffer(5 + t.length + e.length + m.length + message.payload().length);
        out.writeByte(KIND_USER_BROADCAST)
                .writeByte(t.length)
                .writeByte(e.length)
                .writeByte(m.length)
                .writeByte(message.json() ? ENCODING_JSON : ENCODING_BINARY)
                .writeBytes(t)
                .writeBytes(e)
                .writeBytes(m)
                .writeBytes(message.payload());
        return out;
    }

    private static String text(ByteBuf frame, int at, int len) {
        if (len == 0) {
            return "";
        }
        byte[] bytes = new byte[len];
        frame.getBytes(at, bytes);
        try {
            return StandardCharsets.UTF_8
                    .newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes))
                    .toString();
        } catch (CharacterCodingException ex) {
            return new String(bytes, StandardCharsets.ISO_8859_1);
        }
    }
}
