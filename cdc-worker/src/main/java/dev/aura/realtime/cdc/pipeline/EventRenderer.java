package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;

/**
 * Serialises the message of one {@link Delivery}: the {@link ChangeEvent} listing the delivery's
 * subscribers ({@code event_id, project_id, table, type, allowed_sub_ids, data}), with its
 * {@link View} applied to {@code data}. The message is written in one pass from the event's
 * undecoded values into the bytes handed to NATS (no tree, no second serialisation); views of
 * one change never see each other's cuts because nothing is cut in place. Thread-safe.
 */
public final class EventRenderer {
    private final EventJson json = new EventJson();
    private final ObjectMapper mapper = WireJson.mapper();
    /** One reusable buffer per rendering thread (a shard); it keeps at most one block of at most 128 KiB. */
    private final ThreadLocal<ByteArrayBuilder> buffers = ThreadLocal.withInitial(() -> new ByteArrayBuilder(2048));

    /** The message's {@code Aura-Event-Id}: the change's id, plus the view's suffix when it is not full. */
    public static String messageId(BuiltEvent event, Delivery delivery) {
        return event.eventId() + delivery.view().idSuffix();
    }

    public byte[] render(BuiltEvent event, Delivery delivery) throws IOException {
        View view = delivery.view();
        ByteArrayBuilder out = buffers.get();
        out.reset();
        try (JsonGenerator g = EventJson.FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeStringField("event_id", messageId(event, delivery));
            g.writeStringField("project_id", event.projectId());
            g.writeStringField("table", event.table());
            g.writeStringField("type", event.type());
            g.writeArrayFieldStart("allowed_sub_ids");
            for (String subId : delivery.subIds()) {
                g.writeString(subId);
            }
            g.writeEndArray();
            g.writeFieldName("data");
            if (event.hasTuples()) {
                json.writeData(g, event, view);
            } else {
                mapper.writeTree(g, view.full() ? event.data() : project(event, view));
            }
            g.writeEndObject();
        }
        return out.toByteArray();
    }

    /** A view of an event given as trees (tests and hand-made events): works on a copy. */
    static ObjectNode project(BuiltEvent event, View view) {
        ObjectNode data = event.data().deepCopy();
        if (view.columns() != null) {
            retain(data.get("record"), view);
            retain(data.get("old_record"), view);
            if (data.get("columns") instanceof ArrayNode columns) {
                ArrayNode kept = data.putArray("columns");
                for (JsonNode column : columns) {
                    if (view.columns().contains(column.path("name").asText())) {
                        kept.add(column);
                    }
                }
            }
        }
        if (view.oldRecordKeyOnly() && data.get("old_record") instanceof ObjectNode old) {
            old.retain(event.primaryKey());
        }
        if (!view.errors().isEmpty()) {
            ArrayNode errors = data.get("errors") instanceof ArrayNode existing ? existing : data.putArray("errors");
            view.errors().forEach(errors::add);
        }
        return data;
    }

    private static void retain(JsonNode row, View view) {
        if (row instanceof ObjectNode object) {
            object.retain(view.columns());
        }
    }
}
