package dev.aura.realtime.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.decode.MalformedWalRowException;
import dev.aura.realtime.cdc.decode.Wal2JsonDecoder;
import dev.aura.realtime.cdc.decode.WalMessage;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RawRow;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.pipeline.EventBuilder;
import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * Changes and events for tests, made the way the pipeline makes them: values as wal2json prints
 * them ({@link RawValue}s), changes as the decoder hands them over, events through
 * {@link EventBuilder}. Production types carry no test-only forms.
 */
public final class EventFixture {
    private EventFixture() {}

    /** The value wal2json prints for a JSON tree node (numbers and structures unquoted, the rest a string). */
    public static RawValue raw(JsonNode node) {
        if (node == null || node.isNull()) {
            return RawValue.NULL;
        }
        if (node.isBoolean()) {
            return node.booleanValue() ? RawValue.TRUE : RawValue.FALSE;
        }
        byte[] json;
        try {
            json = WireJson.mapper().writeValueAsBytes(node);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (node.isTextual()) {
            return RawValue.string(json, 1, json.length - 2);
        }
        return RawValue.literal(node.isNumber() ? RawValue.Kind.NUMBER : RawValue.Kind.JSON, json, 0, json.length);
    }

    public static DecodedColumn column(String name, long typeOid, JsonNode value) {
        return new DecodedColumn(name, typeOid, raw(value));
    }

    /** A change as the decoder hands it over for a row that was not cut (its row size unknown: 0). */
    public static RowChange change(
            char action,
            String schema,
            String table,
            List<DecodedColumn> columns,
            List<DecodedColumn> identity,
            List<String> pk,
            Lsn commitLsn,
            long ordinal,
            String commitTimestamp) {
        return new RowChange(
                action, schema, table, columns, identity, pk, commitLsn, ordinal, commitTimestamp, RawRow.EMPTY, false);
    }

    /** Decodes a row given as text (the readers hand over bytes). */
    public static WalMessage decode(Wal2JsonDecoder decoder, Lsn rowLsn, String data) throws MalformedWalRowException {
        byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
        return decoder.decode(rowLsn, bytes, 0, bytes.length);
    }

    /**
     * The event {@link EventBuilder} builds of a change of {@code schema.table} whose rows are
     * given as JSON objects of wal2json values, each column typed by {@code columnTypes}
     * (typnames; a column without one is {@code text}).
     *
     * @param type INSERT, UPDATE or DELETE; an UPDATE's or DELETE's old row is its identity
     */
    public static BuiltEvent event(
            String projectId,
            String schema,
            String table,
            String type,
            ObjectNode record,
            ObjectNode oldRecord,
            Map<String, String> columnTypes,
            List<String> pk) {
        List<String> typnames = new ArrayList<>(new java.util.TreeSet<>(columnTypes.values()));
        if (!typnames.contains("text")) {
            typnames.add("text");
        }
        EventBuilder builder = new EventBuilder(oid -> typnames.get((int) oid - 1), 1 << 20);
        char action = type.charAt(0);
        RowChange change = change(
                action,
                schema,
                table,
                record == null ? List.of() : columns(record, columnTypes, typnames),
                oldRecord == null ? List.of() : columns(oldRecord, columnTypes, typnames),
                pk,
                Lsn.parse("0/1"),
                0,
                "2026-01-02T03:04:05Z");
        try {
            return builder.build(change, projectId);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static List<DecodedColumn> columns(ObjectNode row, Map<String, String> columnTypes, List<String> typnames) {
        List<DecodedColumn> columns = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = row.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> f = it.next();
            String typname = columnTypes.getOrDefault(f.getKey(), "text");
            columns.add(column(f.getKey(), typnames.indexOf(typname) + 1, f.getValue()));
        }
        return columns;
    }
}
