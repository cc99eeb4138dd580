package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns a captured row of a project's messages table into a {@link DbBroadcast} (docs/design.md
 * H2): Broadcast from Database ({@code realtime.send}, {@code realtime.send_binary},
 * {@code realtime.broadcast_changes}, a tenant's own insert) and persisted client broadcasts all
 * arrive this way (a row with {@code binary_payload} as a binary message), through the same slot
 * as every change, so they are published in commit order, at least once, with the change's id
 * {@code <commit LSN>:<ordinal>} as {@code Aura-Event-Id} (ws-front drops re-published copies).
 *
 * <p>Only INSERTs of {@code extension = 'broadcast'} are messages; updates, deletes (the janitor's)
 * and truncates of the table are not. A payload larger than {@code maxPayloadBytes}, one Postgres
 * cut because the row was too large (poll source, docs/design.md C6), or a message larger than
 * what NATS accepts is delivered with {@code {"error": "Error 413: Payload Too Large", "id": ...}}
 * instead, so subscribers learn of it and can read it from the table by id. Thread-safe.
 */
public final class MessageRows {
    private static final Logger log = LoggerFactory.getLogger(MessageRows.class);
    static final String TABLE = "messages";

    /**
     * Largest payload a captured message is published with (docs/design.md H2): below NATS's
     * default 1 MiB message limit with room for the envelope.
     */
    public static final int MAX_PAYLOAD_BYTES = 900 * 1024;

    /** A message ready to publish. */
    public record Rendered(String subject, String eventId, byte[] body) {}

    /** Writes messages: their payloads may be as deep as a value the pipeline carries (C13). */
    private final ObjectMapper mapper = WireJson.dataMapper();
    /** Reads a payload: every number a numeric holds, at most WireJson.MAX_VALUE_NESTING levels. */
    private final ObjectMapper values = WireJson.valueMapper();

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
        return render(change, projectId, Long.MAX_VALUE);
    }

    /**
     * @param maxBodyBytes largest message NATS accepts; a larger one is published as the 413 stub
     * @return the message to publish, or null when the row is not a broadcast message
     */
    public Rendered render(RowChange change, String projectId, long maxBodyBytes) throws JsonProcessingException {
        if (change.action() != 'I') {
            return null;
        }
        String topic = null;
        String extension = null;
        String event = null;
        String id = null;
        RawValue payload = RawValue.NULL;
        RawValue binary = RawValue.NULL;
        boolean priv = false;
        for (DecodedColumn c : change.columns()) {
            RawValue v = c.value();
            switch (c.name()) {
                case "topic" -> topic = v.text();
                case "extension" -> extension = v.text();
                case "event" -> event = v.text();
                case "id" -> id = v.text();
                case "payload" -> payload = v;
                case "binary_payload" -> binary = v;
                case "private" -> priv = v.kind() == RawValue.Kind.TRUE;
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
        String subject = Subjects.messages(projectId, topic);
        String name = event == null ? "" : event;
        if (payload.kind() == RawValue.Kind.CUT || payload.byteLength() > maxPayloadBytes) {
            return tooLarge(subject, change, projectId, topic, name, id, priv);
        }
        if (binary.kind() != RawValue.Kind.NULL) {
            // bytea arrives as its hex digits (with or without "\\x"): two characters a byte
            if (binary.kind() == RawValue.Kind.CUT || binary.byteLength() / 2 > maxPayloadBytes) {
                return tooLarge(subject, change, projectId, topic, name, id, priv);
            }
            byte[] raw = hexBytes(binary.text());
            if (raw == null) {
                log.warn(
                        "[MessageRowSkipped] project {}: binary_payload of message {} is not bytea hex output; not delivered",
                        projectId,
                        id);
                return null;
            }
            byte[] bytes = mapper.writeValueAsBytes(new DbBroadcast(id, topic, name, null, priv, raw));
            if (bytes.length > maxBodyBytes) {
                return tooLarge(subject, change, projectId, topic, name, id, priv);
            }
            return new Rendered(subject, change.eventId(), bytes);
        }
        JsonNode body = payload.kind() == RawValue.Kind.NULL
                ? mapper.createObjectNode()
                : values.readTree(payload.text()); // jsonb is printed by wal2json as a string
        byte[] bytes = mapper.writeValueAsBytes(new DbBroadcast(id, topic, name, body, priv));
        if (bytes.length > maxBodyBytes) {
            return tooLarge(subject, change, projectId, topic, name, id, priv);
        }
        return new Rendered(subject, change.eventId(), bytes);
    }

    private Rendered tooLarge(
            String subject, RowChange change, String projectId, String topic, String event, String id, boolean priv)
            throws JsonProcessingException {
        log.warn(
                "[MessageTooLarge] project {}: message {} is too large to publish (payload cut, over {} bytes, or over NATS max_payload); delivered as Error 413",
                projectId,
                id,
                maxPayloadBytes);
        return stub(subject, change.eventId(), topic, event, id, priv, "Error 413: Payload Too Large");
    }

    private Rendered stub(
            String subject, String eventId, String topic, String event, String id, boolean priv, String error)
            throws JsonProcessingException {
        ObjectNode stub = mapper.createObjectNode();
        stub.put("error", error);
        stub.put("id", id);
        byte[] bytes = mapper.writeValueAsBytes(new DbBroadcast(id, topic, event, stub, priv));
        return new Rendered(subject, eventId, bytes);
    }

    /**
     * The message that tells a topic's subscribers that one of its messages could not be delivered
     * (docs/design.md C13): {@code {"error": <error>, "id": <the row's id>}} under the message's
     * event, with its own message id ({@code <event id>:e}), so the message itself, re-published
     * from the quarantine later, is not taken for a copy of it.
     *
     * @return null when the row is not a broadcast message or lacks a topic
     */
    public Rendered errorStub(RowChange change, String projectId, String error) throws JsonProcessingException {
        if (change.action() != 'I') {
            return null;
        }
        String topic = null;
        String extension = null;
        String event = null;
        String id = null;
        boolean priv = false;
        for (DecodedColumn c : change.columns()) {
            switch (c.name()) {
                case "topic" -> topic = c.value().text();
                case "extension" -> extension = c.value().text();
                case "event" -> event = c.value().text();
                case "id" -> id = c.value().text();
                case "private" -> priv = c.value().kind() == RawValue.Kind.TRUE;
                default -> {}
            }
        }
        if (!"broadcast".equals(extension) || topic == null) {
            return null;
        }
        return stub(
                Subjects.messages(projectId, topic),
                change.eventId() + ":e",
                topic,
                event == null ? "" : event,
                id,
                priv,
                error);
    }

    /**
     * Postgres's bytea hex output as bytes: {@code \\x0a1b..}, or the digits alone as wal2json
     * prints them; null when it is not that.
     */
    static byte[] hexBytes(String text) {
        if (text == null) {
            return null;
        }
        int from = text.startsWith("\\x") ? 2 : 0;
        if (((text.length() - from) & 1) != 0) {
            return null;
        }
        try {
            return java.util.HexFormat.of().parseHex(text, from, text.length());
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
