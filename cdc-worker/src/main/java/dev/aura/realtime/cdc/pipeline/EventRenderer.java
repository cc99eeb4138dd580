package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.common.wire.ChangeEvent;
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
            json.writeData(g, event, view);
            g.writeEndObject();
        }
        return out.toByteArray();
    }
}
