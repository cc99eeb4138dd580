package dev.aura.realtime.common.wire;

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
 * @param payload its {@code payload}, a JSON value
 * @param privateChannel its {@code private}: true reaches private channels of the topic whose
 *     members may read broadcasts, false reaches the public channel
 */
public record DbBroadcast(
        @JsonProperty("id") String id,
        @JsonProperty("topic") String topic,
        @JsonProperty("event") String event,
        @JsonProperty("payload") JsonNode payload,
        @JsonProperty("private") boolean privateChannel) {}
