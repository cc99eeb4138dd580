package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.platform.RealtimeSchemas;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a captured row of a project's messages table into a {@link DbBroadcast} (docs/design.md
 * H2): Broadcast from Database ({@code realtime.send}, {@code realtime.broadcast_changes}, a
 * tenant's own insert) and persisted client broadcasts all arrive this way, through the same slot
 * as every change, so they are published in commit order, at least once, with the change's id
 * {@code <commit LSN>:<ordinal>} as {@code Aura-Event-Id} (ws-front drops re-published copies).
 *
 * <p>Only INSERTs of {@code extension = 'broadcast'} are messages; updates, deletes (the janitor's)
 * and truncates of the table are not. A payload larger than {@code maxPayloadBytes} is delivered
 * with {@code {"error": "Error 413: Payload Too Large", "id": ...}} instead, so subscribers learn
 * of it and can read it from the table by id. Thread-safe.
 */
public final class MessageRows {
    private static final Logger log = LoggerFactory.getLogger(MessageRows.class);
    static final String TABLE = "messages";

    /** A message ready to publish. */
    public record Rendered(String subject, String eventId, byte[] body) {}

    private final ObjectMapper mapper = WireJson.mapper();
    private final int maxPayloadBytes;

    public MessageRows(int maxPayloadBytes) {
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /** Whether {@code change} is a row of {@code projectId}'s messages table. */
    public static boolean isMessageRow(RowChange change, String projectId) {
        return TABLE.equals(change.table()) && RealtimeSchemas.isRealtimeSchema(projectId, change.schema());
    }

    /** @return the message to publish, or null when the row is not a broadcast message */
    public Rendered render(RowChange change, String projectId) throws JsonProcessingException {
        if (change.action() != 'I') {
            return null;
        }
        String topic = null;
        String extension = null;
        String event = null;
        String id = null;
        String payload = null;
        boolean priv = false;
        for (DecodedColumn c : change.columns()) {
            JsonNode v = c.value();
            boolean present = v != null && !v.isNull();
            switch (c.name()) {
                case "topic" -> topic = present ? v.asText() : null;
                case "extension" -> extension = present ? v.asText() : null;
                case "event" -> event = present ? v.asText() : null;
                case "id" -> id = present ? v.asText() : null;
                case "payload" -> payload = present ? v.asText() : null;
                case "private" -> priv = present && v.asBoolean(false);
                default -> {}
            }
        }
        if (!"broadcast".equals(extension)) {
            return null;
        }
        if (topic == null) {
            log.warn(
                    "[MessageRowSkipped] project {}: a messages row without topic (event id {}) is not delivered",
                    projectId,
                    change.eventId());
            return null;
        }
        JsonNode body;
        if (payload == null) {
            body = mapper.createObjectNode();
        } else if (payload.getBytes(StandardCharsets.UTF_8).length > maxPayloadBytes) {
            log.warn(
                    "[MessageTooLarge] project {} topic {}: message {} has a payload over {} bytes; delivered as Error 413",
                    projectId,
                    abbreviate(topic),
                    id,
                    maxPayloadBytes);
            ObjectNode stub = mapper.createObjectNode();
            stub.put("error", "Error 413: Payload Too Large");
            stub.put("id", id);
            body = stub;
        } else {
            body = mapper.readTree(payload);
        }
        DbBroadcast message = new DbBroadcast(id, topic, event == null ? "" : event, body, priv);
        return new Rendered(Subjects.messages(projectId, topic), change.eventId(), mapper.writeValueAsBytes(message));
    }

    private static String abbreviate(String topic) {
        return topic.length() > 80 ? topic.substring(0, 80) + "..." : topic;
    }
}
