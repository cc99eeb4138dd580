package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.WireJson;

/**
 * Serialises the message of one {@link Delivery}: the {@link ChangeEvent} listing the delivery's
 * subscribers, with its {@link View} applied to {@code data}. A {@link View#FULL} view publishes
 * the built {@code data} as it is; any other works on a copy, so views of one change never see
 * each other's cuts. Thread-safe.
 */
public final class EventRenderer {
    private final ObjectMapper mapper = WireJson.mapper();

    /** The message's {@code Aura-Event-Id}: the change's id, plus the view's suffix when it is not full. */
    public static String messageId(BuiltEvent event, Delivery delivery) {
        return event.eventId() + delivery.view().idSuffix();
    }

    public byte[] render(BuiltEvent event, Delivery delivery) throws JsonProcessingException {
        View view = delivery.view();
        ObjectNode data = view.full() ? event.data() : project(event, view);
        return mapper.writeValueAsBytes(new ChangeEvent(
                messageId(event, delivery), event.projectId(), event.table(), event.type(), delivery.subIds(), data));
    }

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
