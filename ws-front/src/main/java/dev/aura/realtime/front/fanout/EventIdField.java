package dev.aura.realtime.front.fanout;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * {@code postgres_changes_options.event_id: true} (docs/protocol.md): realtime-js hands the
 * callback only {@code record} and {@code old_record} of a change's data, so the event id travels
 * as one extra key {@code _aura_event_id} in each of them. Off by default: no app's rows change.
 */
final class EventIdField {
    /** The key added to {@code record} and {@code old_record}. */
    static final String KEY = "_aura_event_id";

    private EventIdField() {}

    /** A copy of {@code data} with the id added to its record objects. */
    static JsonNode added(JsonNode data, String eventId) {
        if (!data.isObject()) {
            return data;
        }
        ObjectNode copy = ((ObjectNode) data).deepCopy();
        for (String field : new String[] {"record", "old_record"}) {
            if (copy.get(field) instanceof ObjectNode row) {
                row.put(KEY, eventId);
            }
        }
        return copy;
    }
}
