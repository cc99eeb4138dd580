package dev.aura.realtime.front.relay;

import dev.aura.realtime.front.protocol.UserBroadcast;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Body of a broadcast on {@code aura.realtime.broadcast.<project>.<topic>} between ws-front
 * replicas. The message id travels in {@code Aura-Event-Id}, the sender in {@code Aura-Origin}.
 *
 * <pre>
 * version (1) | encoding (0 binary, 1 JSON) | event length (uint16, big-endian) | event (UTF-8) | payload
 * </pre>
 *
 * Binary rather than JSON so binary payloads cross without base64. (Candidate for {@code common}
 * once another component speaks it.)
 */
public final class BroadcastWire {
    public static final int VERSION = 1;

    private BroadcastWire() {}

    public static byte[] encode(UserBroadcast message) {
        byte[] event = message.event().getBytes(StandardCharsets.UTF_8);
        if (event.length > 0xFFFF) {
            throw new IllegalArgumentException("broadcast event name longer than 65535 bytes");
        }
        return ByteBuffer.allocate(4 + event.length + message.payload().length)
                .put((byte) VERSION)
                .put((byte) (message.json() ? 1 : 0))
                .putShort((short) event.length)
                .put(event)
                .put(message.payload())
                .array();
    }

    /** @throws IllegalArgumentException for a body this version cannot read */
    public static UserBroadcast decode(byte[] body, String id) {
        if (body == null || body.length < 4 || body[0] != VERSION || (body[1] != 0 && body[1] != 1)) {
            throw new IllegalArgumentException("not a version " + VERSION + " broadcast body");
        }
        ByteBuffer in = ByteBuffer.wrap(body);
        in.position(2);
        int eventLen = Short.toUnsignedInt(in.getShort());
        if (in.remaining() < eventLen) {
            throw new IllegalArgumentException("broadcast event length exceeds the body");
        }
        String event = new String(body, 4, eventLen, StandardCharsets.UTF_8);
        byte[] payload = new byte[body.length - 4 - eventLen];
        System.arraycopy(body, 4 + eventLen, payload, 0, payload.length);
        return new UserBroadcast(event, payload, body[1] == 1, id);
    }
}
