package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.decode.ValueMapper;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.platform.TypeNames;
import dev.aura.realtime.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the Supabase Realtime {@code data} object of a change (docs/design.md C6): {@code schema}
 * ({@code public}), {@code table}, {@code commit_timestamp} (ISO 8601 UTC with {@code Z}),
 * {@code type}, {@code columns [{name, type}]}, {@code record}, {@code old_record}, {@code errors}.
 *
 * <p>Unchanged TOAST columns, which wal2json leaves out of {@code columns} on UPDATE, are filled
 * from {@code identity} (complete under REPLICA IDENTITY FULL). A record whose JSON is larger
 * than {@code maxRecordBytes} keeps only values of at most 64 bytes and gets
 * {@code errors: ["Error 413: Payload Too Large"]} (Supabase's behaviour), so the key survives
 * for a re-fetch. Thread-safe.
 */
public final class EventBuilder {
    public static final String PAYLOAD_TOO_LARGE = "Error 413: Payload Too Large";
    static final int SMALL_VALUE_BYTES = 64;
    private static final JsonNodeFactory NODES = JsonNodeFactory.withExactBigDecimals(true);

    private final TypeNames types;
    private final ValueMapper values = new ValueMapper();
    private final ObjectMapper mapper = WireJson.mapper();
    private final int maxRecordBytes;

    public EventBuilder(TypeNames types, int maxRecordBytes) {
        this.types = types;
        this.maxRecordBytes = maxRecordBytes;
    }

    /** @throws SQLException when a type OID has to be looked up and the lookup fails */
    public BuiltEvent build(RowChange change, String projectId) throws SQLException {
        Map<String, String> columnTypes = new LinkedHashMap<>();
        ObjectNode record = null;
        ObjectNode oldRecord = null;
        if (change.action() == 'I' || change.action() == 'U') {
            record = row(change.columns(), columnTypes);
        }
        if (change.action() == 'U' || change.action() == 'D') {
            oldRecord = change.identity().isEmpty() ? null : row(change.identity(), columnTypes);
        }
        if (record != null && oldRecord != null) {
            // Unchanged TOAST values are absent from wal2json's new tuple; the old tuple has them.
            var names = oldRecord.fieldNames();
            while (names.hasNext()) {
                String name = names.next();
                if (!record.has(name)) {
                    record.set(name, oldRecord.get(name));
                }
            }
        }
        ArrayNode errors = null;
        if (record != null && tooLarge(record)) {
            record = shrink(record);
            errors = NODES.arrayNode().add(PAYLOAD_TOO_LARGE);
        }
        if (oldRecord != null && tooLarge(oldRecord)) {
            oldRecord = shrink(oldRecord);
            errors = NODES.arrayNode().add(PAYLOAD_TOO_LARGE);
        }
        ObjectNode data = NODES.objectNode();
        data.put("schema", "public");
        data.put("table", change.table());
        data.put("commit_timestamp", change.commitTimestamp());
        data.put("type", change.type());
        ArrayNode columns = data.putArray("columns");
        columnTypes.forEach(
                (name, type) -> columns.addObject().put("name", name).put("type", type));
        if (record != null) {
            data.set("record", record);
        }
        if (oldRecord != null) {
            data.set("old_record", oldRecord);
        }
        data.set("errors", errors == null ? NODES.nullNode() : errors);
        return new BuiltEvent(
                change.eventId(),
                projectId,
                change.schema(),
                change.table(),
                change.type(),
                data,
                record,
                oldRecord,
                columnTypes,
                change.pk());
    }

    private ObjectNode row(List<DecodedColumn> cols, Map<String, String> columnTypes) throws SQLException {
        ObjectNode row = NODES.objectNode();
        for (DecodedColumn c : cols) {
            String typname = types.typname(c.typeOid());
            columnTypes.putIfAbsent(c.name(), typname);
            row.set(c.name(), values.toJson(typname, c.value()));
        }
        return row;
    }

    private boolean tooLarge(ObjectNode row) {
        // Serialising every record just to measure it doubled the cost of an event. JSON text is
        // at most 6 bytes per character of content (a \\u00XX escape; UTF-8 needs at most 3),
        // so a record whose content is under a sixth of the limit cannot exceed it.
        if (6L * contentChars(row) <= maxRecordBytes) {
            return false;
        }
        try {
            return mapper.writeValueAsBytes(row).length > maxRecordBytes;
        } catch (JsonProcessingException e) {
            return true;
        }
    }

    /** Characters of names and values in a JSON tree, plus a few per node for punctuation. */
    private static long contentChars(JsonNode node) {
        if (node.isContainerNode()) {
            long n = 2;
            var fields = node.properties().iterator();
            if (node.isObject()) {
                while (fields.hasNext()) {
                    var f = fields.next();
                    n += f.getKey().length() + 4 + contentChars(f.getValue());
                }
            } else {
                for (JsonNode item : node) {
                    n += 1 + contentChars(item);
                }
            }
            return n;
        }
        return node.isTextual() ? node.asText().length() + 2 : node.asText().length();
    }

    private ObjectNode shrink(ObjectNode row) {
        ObjectNode small = NODES.objectNode();
        var fields = row.properties();
        for (Map.Entry<String, JsonNode> f : fields) {
            JsonNode v = f.getValue();
            String text = v.isTextual() ? v.asText() : v.toString();
            if (text.getBytes(StandardCharsets.UTF_8).length <= SMALL_VALUE_BYTES) {
                small.set(f.getKey(), v);
            }
        }
        return small;
    }
}
