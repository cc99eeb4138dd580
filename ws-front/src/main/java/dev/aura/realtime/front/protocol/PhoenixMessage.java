package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A Phoenix channel message after decoding (client to server, {@link Inbound}) or before encoding
 * (server to client, {@link Outbound}). Handlers only see these types; the JSON framing of each
 * {@link Vsn} and the binary broadcast kinds live in {@link PhoenixCodec}.
 *
 * <p>{@code joinRef} and {@code ref} are the client's opaque strings (null when absent);
 * {@code topic} is the full topic, e.g. {@code realtime:room-1}.
 */
public sealed interface PhoenixMessage {

    /** A decoded client frame. */
    sealed interface Inbound extends PhoenixMessage {
        String joinRef();

        String ref();

        String topic();
    }

    /** A server frame to encode for the connection's {@link Vsn}. */
    sealed interface Outbound extends PhoenixMessage {}

    /**
     * {@code phx_join}, typed by {@link JoinDecoder}: {@code config} is the join's config, or null
     * when its payload cannot be served, and then {@code refusal} says why (the reason of the join's
     * error reply). {@code lastEventId} is the SSE endpoint's {@code Last-Event-ID}: the channel's
     * broadcasts after it are replayed once the join is accepted. The Phoenix codec never sets it (null).
     */
    record Join(String joinRef, String ref, String topic, JoinConfig config, String refusal, String lastEventId)
            implements Inbound {}

    /** {@code phx_leave}. */
    record Leave(String joinRef, String ref, String topic) implements Inbound {}

    /** {@code heartbeat} on topic {@code phoenix}. */
    record Heartbeat(String joinRef, String ref, String topic) implements Inbound {}

    /** {@code access_token} refresh; {@code token} is null when the client sent null. */
    record AccessToken(String joinRef, String ref, String topic, String token) implements Inbound {}

    /** {@code broadcast} push, from a JSON frame or a binary kind 3 frame. */
    /** @param persist the client asked to store the message ({@code persist}; docs/design.md H2), else null */
    record BroadcastPush(String joinRef, String ref, String topic, UserBroadcast broadcast, Persist persist)
            implements Inbound {
        public BroadcastPush(String joinRef, String ref, String topic, UserBroadcast broadcast) {
            this(joinRef, ref, topic, broadcast, null);
        }

        /** Whether the client asked to store the message. */
        public boolean persisted() {
            return persist != null;
        }
    }

    /** {@code presence} push ({@code track}/{@code untrack}); handled by the presence seam. */
    record PresencePush(String joinRef, String ref, String topic, JsonNode payload) implements Inbound {}

    /** Any other event; handlers ignore it. */
    record Other(String joinRef, String ref, String topic, String event, JsonNode payload) implements Inbound {}

    /**
     * A frame that could not be decoded. Whatever could be read before the failure is kept so
     * the handler can reply an error when {@code ref} is known.
     */
    record Malformed(String joinRef, String ref, String topic, String reason) implements Inbound {}

    /** {@code phx_reply} with {@code {"status": status, "response": response}}. */
    record Reply(String joinRef, String ref, String topic, String status, JsonNode response) implements Outbound {}

    /** A server push (no ref): {@code system}, {@code phx_close}, {@code presence_state}, ... */
    record Push(String joinRef, String ref, String topic, String event, JsonNode payload) implements Outbound {}
}
