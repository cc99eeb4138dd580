package dev.aura.realtime.front.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;

/**
 * Server frames of a user broadcast: a binary kind 4 frame for vsn 2.0.0 (text JSON when a header
 * field exceeds 255 bytes) and a JSON object frame for vsn 1.0.0. The pushed payload is
 * {@code {"type":"broadcast","event":..,"payload":..,"meta":{"id":..}}}, as realtime-js expects.
 */
public final class BroadcastFrames {
    private final JsonFrames json;
    private final BinaryFrames binary;

    public BroadcastFrames(JsonFrames json, BinaryFrames binary) {
        this.json = json;
        this.binary = binary;
    }

    /**
     * @return the frame, or null when the message cannot be represented for {@code vsn}
     *     (a binary payload for a vsn 1.0.0 client, or an over-long header with a binary payload)
     */
    public OutFrame encode(String topic, UserBroadcast message, Vsn vsn, ByteBufAllocator alloc) {
        return encode(topic, message, vsn, false, alloc);
    }

    /**
     * As {@link #encode(String, UserBroadcast, Vsn, ByteBufAllocator)}; a replayed message (from
     * history, at join) carries {@code meta: {"replayed": true, "id": ..}} as realtime-js types it.
     */
    public OutFrame encode(String topic, UserBroadcast message, Vsn vsn, boolean replayed, ByteBufAllocator alloc) {
        String meta = message.id() == null
                ? null
                : (replayed ? "{\"replayed\":true,\"id\":" : "{\"id\":") + json.quote(message.id()) + "}";
        if (vsn == Vsn.V2) {
            ByteBuf frame = binary.encodeUserBroadcast(topic, message, meta == null ? "" : meta, alloc);
            if (frame != null) {
                return new OutFrame(frame, true);
            }
        }
        if (!message.json()) {
            return null;
        }
        String prefix = "{\"type\":\"broadcast\",\"event\":" + json.quote(message.event()) + ",\"payload\":";
        String suffix = meta == null ? "}" : ",\"meta\":" + meta + "}";
        ByteBuf shared = Unpooled.wrappedBuffer(message.payload());
        return new OutFrame(
                json.encodeWithSharedPayload(vsn, topic, "broadcast", prefix, shared, suffix, alloc), false);
    }
}
