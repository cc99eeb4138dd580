package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Maps a decoded {@code (topic, event, payload)} to the matching {@link PhoenixMessage.Inbound}. */
final class Inbounds {
    static final String PHOENIX_TOPIC = "phoenix";

    private Inbounds() {}

    static PhoenixMessage.Inbound of(
            ObjectMapper mapper,
            JoinDecoder joins,
            String joinRef,
            String ref,
            String topic,
            String event,
            JsonNode payload) {
        return switch (event) {
            case "phx_join" ->
                payload.isObject()
                        ? joins.join(joinRef, ref, topic, payload, null)
                        : new PhoenixMessage.Malformed(joinRef, ref, topic, "phx_join payload must be an object");
            case "phx_leave" -> new PhoenixMessage.Leave(joinRef, ref, topic);
            case "heartbeat" ->
                PHOENIX_TOPIC.equals(topic)
                        ? new PhoenixMessage.Heartbeat(joinRef, ref, topic)
                        : new PhoenixMessage.Other(joinRef, ref, topic, event, payload);
            case "access_token" -> {
                JsonNode token = payload.get("access_token");
                yield new PhoenixMessage.AccessToken(
                        joinRef, ref, topic, token != null && token.isTextual() ? token.asText() : null);
            }
            case "broadcast" -> broadcast(mapper, joinRef, ref, topic, payload);
            case "presence" -> new PhoenixMessage.PresencePush(joinRef, ref, topic, payload);
            default -> new PhoenixMessage.Other(joinRef, ref, topic, event, payload);
        };
    }

    private static PhoenixMessage.Inbound broadcast(
            ObjectMapper mapper, String joinRef, String ref, String topic, JsonNode payload) {
        JsonNode userEvent = payload.get("event");
        if (!payload.isObject() || userEvent == null || !userEvent.isTextual()) {
            return new PhoenixMessage.Malformed(joinRef, ref, topic, "broadcast payload needs a string event");
        }
        JsonNode user = payload.get("payload");
        byte[] bytes;
        try {
            bytes = user == null ? new byte[] {'{', '}'} : mapper.writeValueAsBytes(user);
        } catch (JsonProcessingException e) {
            return new PhoenixMessage.Malformed(joinRef, ref, topic, "broadcast payload is not serialisable");
        }
        return new PhoenixMessage.BroadcastPush(
                joinRef,
                ref,
                topic,
                new UserBroadcast(userEvent.asText(), bytes, true, null),
                Persist.of(payload.get("persist")));
    }
}
