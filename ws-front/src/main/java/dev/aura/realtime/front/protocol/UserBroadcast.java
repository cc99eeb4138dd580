package dev.aura.realtime.front.protocol;

import java.util.Arrays;
import java.util.Objects;

/**
 * A user broadcast as it travels between clients: the user event name, the user payload bytes
 * and how to read them, and the server-assigned message id (sent to clients as {@code meta.id}).
 *
 * <p>{@code payload} is never re-parsed after validation: JSON payloads are the UTF-8 text of
 * one JSON value, binary payloads are opaque bytes (vsn 2.0.0 clients only). Immutable: the
 * array is not copied, so creators hand over ownership.
 *
 * @param event the user event name ({@code payload.event} of the client push)
 * @param payload the user payload bytes
 * @param json true for a JSON payload (encoding 1), false for binary (encoding 0)
 * @param id message id (uuid), or null when none was assigned
 */
public record UserBroadcast(String event, byte[] payload, boolean json, String id) {
    public UserBroadcast {
        Objects.requireNonNull(event, "event");
        Objects.requireNonNull(payload, "payload");
    }

    /** A copy carrying the given message id. */
    public UserBroadcast withId(String newId) {
        return new UserBroadcast(event, payload, json, newId);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof UserBroadcast b
                && event.equals(b.event)
                && json == b.json
                && Arrays.equals(payload, b.payload)
                && Objects.equals(id, b.id);
    }

    @Override
    public int hashCode() {
        return Objects.hash(event, json, id, Arrays.hashCode(payload));
    }

    @Override
    public String toString() {
        return "UserBroadcast[event=" + event + ", json=" + json + ", bytes=" + payload.length + ", id=" + id + "]";
    }
}
