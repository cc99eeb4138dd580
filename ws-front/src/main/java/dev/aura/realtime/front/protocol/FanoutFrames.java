package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;

/**
 * The server frames the fan-out shares between connections, for each {@link Framing}: user
 * broadcasts (live and replayed from history) and postgres_changes pushes, each a complete frame
 * as the socket carries it ({@link WireFrames}). Payload bytes are never re-parsed: they are copied
 * once into each frame between a head and a tail.
 *
 * <ul>
 *   <li>broadcast: a binary kind 4 frame for vsn 2.0.0 (text JSON when a header field exceeds 255
 *       bytes), a JSON frame for vsn 1.0.0, an SSE {@code broadcast} event with {@code id:}; the
 *       pushed payload is {@code {"type":"broadcast","event":..,"payload":..,"meta":{"id":..}}},
 *       as realtime-js expects;
 *   <li>postgres_changes: {@code {"ids":[..],"data":..}} around one serialisation of the event's data.
 * </ul>
 *
 * Thread-safe; one instance per server.
 */
public final class FanoutFrames {
    /** The error a vsn 2.0.0 member receives instead of a binary broadcast whose header is over 255 bytes. */
    public static final String NOT_FRAMED =
            "Error 413: binary broadcast not deliverable: topic, event or metadata over 255 bytes";

    private final JsonFrames json;
    private final BinaryFrames binary;

    public FanoutFrames(JsonFrames json, BinaryFrames binary) {
        this.json = json;
        this.binary = binary;
    }

    /**
     * A user broadcast; a replayed one (from history) carries {@code meta: {"replayed": true, "id": ..}}
     * as realtime-js types it.
     *
     * @return the frame, or null when the message cannot be represented in {@code framing} (a
     *     binary payload outside vsn 2.0.0); a binary payload whose header is over 255 bytes reaches
     *     a vsn 2.0.0 member as a text broadcast of {@code {"error": NOT_FRAMED, "id": <id>}}
     */
    public OutFrame broadcast(
            String topic, UserBroadcast message, Framing framing, boolean replayed, ByteBufAllocator alloc) {
        String meta = message.id() == null
                ? null
                : (replayed ? "{\"replayed\":true,\"id\":" : "{\"id\":") + json.quote(message.id()) + "}";
        if (framing == Framing.V2) {
            ByteBuf frame = binary.encodeUserBroadcast(topic, message, meta == null ? "" : meta, alloc);
            if (frame != null) {
                return WireFrames.webSocket(OutFrame.Kind.BINARY, frame, alloc);
            }
        }
        if (!message.json()) {
            if (framing != Framing.V2) {
                return null; // vsn 1.0.0 and SSE cannot represent bytes, as Supabase (docs/protocol.md)
            }
            // a vsn 2.0.0 member is owed this message but its header has no binary form: it hears
            // of it as a text broadcast whose payload names the message and why (docs/protocol.md)
            message = new UserBroadcast(message.event(), unframable(message.id()), true, message.id());
        }
        String prefix = "{\"type\":\"broadcast\",\"event\":" + json.quote(message.event()) + ",\"payload\":";
        String suffix = meta == null ? "}" : ",\"meta\":" + meta + "}";
        byte[] payload = framing == Framing.SSE ? SseEvents.oneLine(message.payload()) : message.payload();
        return shared(
                framing, topic, "broadcast", message.id(), prefix, Unpooled.wrappedBuffer(payload), suffix, alloc);
    }

    private byte[] unframable(String id) {
        return ("{\"error\":\"" + NOT_FRAMED + "\",\"id\":" + (id == null ? "null" : json.quote(id)) + "}")
                .getBytes(StandardCharsets.UTF_8);
    }

    /** The {@code data} object of a change event, serialised once and shared by every frame of that event. */
    public ByteBuf changeData(JsonNode data) throws JsonProcessingException {
        return Unpooled.wrappedBuffer(json.mapper().writeValueAsBytes(data));
    }

    /**
     * A postgres_changes push.
     *
     * @param idsJson the JSON array of the recipient's binding ids the change matched
     * @param data from {@link #changeData} (not released)
     */
    public OutFrame postgresChanges(
            String topic, String idsJson, ByteBuf data, Framing framing, ByteBufAllocator alloc) {
        return shared(framing, topic, "postgres_changes", null, "{\"ids\":" + idsJson + ",\"data\":", data, "}", alloc);
    }

    private OutFrame shared(
            Framing framing,
            String topic,
            String event,
            String id,
            String prefix,
            ByteBuf payload,
            String suffix,
            ByteBufAllocator alloc) {
        return switch (framing) {
            case V1, V2 ->
                WireFrames.webSocket(
                        OutFrame.Kind.TEXT,
                        json.encodeWithSharedPayload(
                                framing == Framing.V2 ? Vsn.V2 : Vsn.V1, topic, event, prefix, payload, suffix, alloc),
                        alloc);
            case SSE ->
                WireFrames.sseChunk(SseEvents.eventWithSharedData(id, event, prefix, payload, suffix, alloc), alloc);
        };
    }
}
