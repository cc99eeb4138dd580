package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * A row of a project's messages table, captured by the slot and published by the cdc-worker on
 * {@code aura.realtime.messages.<project>.<topic token>} (docs/design.md H2): Broadcast from
 * Database, and persisted client broadcasts. {@code Aura-Event-Id} is the row's change id
 * {@code <commit LSN>:<ordinal>}, so a re-published copy is recognisable.
 *
 * @param id the row's {@code id} (sent to clients as {@code meta.id})
 * @param topic its {@code topic}
 * @param event its {@code event} (never null: a null event is published as {@code ""})
 * @param payload its {@code payload}, a JSON value (ignored when {@code binaryPayload} is set)
 * @param privateChannel its {@code private}: true reaches private channels of the topic whose
 *     members may read broadcasts, false reaches the public channel
 * @param binaryPayload its {@code binary_payload} ({@code send_binary}, base64 on the wire), or
 *     null for a JSON message; vsn 2.0.0 members receive it as a binary frame, vsn 1.0.0 members
 *     nothing (as Supabase)
 */
public record DbBroadcast(
        @JsonProperty("id") String id,
        @JsonProperty("topic") String topic,
        @JsonProperty("event") String event,
        @JsonProperty("payload") JsonNode payload,
        @JsonProperty("private") boolean privateChannel,

        @JsonProperty("binary_payload") @JsonInclude(JsonInclude.Include.NON_NULL)
        byte[] binaryPayload) {

    /** A message with a JSON payload. */
    public DbBroadcast(String id, String topic, String event, JsonNode payload, boolean privateChannel) {
        this(id, topic, event, payload, privateChannel, null);
    }
}
