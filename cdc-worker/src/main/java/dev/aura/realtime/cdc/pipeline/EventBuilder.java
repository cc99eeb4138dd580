package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.catalog.TypeNames;
import dev.aura.realtime.cdc.decode.ValueMapper;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.event.Tuple;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Builds the Supabase Realtime {@code data} payload of a change (docs/design.md C6): {@code schema}
 * ({@code public}), {@code table}, {@code commit_timestamp} (ISO 8601 UTC with {@code Z}),
 * {@code type}, {@code columns [{name, type}]}, {@code record}, {@code old_record}, {@code errors}.
 *
 * <p>Lean: the event keeps the change's undecoded values ({@link Tuple}s) and each message is
 * written from them by {@link EventRenderer}; nothing here parses or serialises a value except
 * to measure a record that may be too large.
 *
 * <p>Unchanged TOAST columns, which wal2json leaves out of {@code columns} on UPDATE, are filled
 * from {@code identity} (complete under REPLICA IDENTITY FULL). A record whose JSON is larger
 * than {@code maxRecordBytes} keeps only values of at most 64 bytes and gets
 * {@code errors: ["Error 413: Payload Too Large"]} (Supabase's behaviour), so the key survives
 * for a re-fetch; so does a change Postgres already cut ({@link RowChange#cut()}). Thread-safe.
 */
public final class EventBuilder {
    public static final String PAYLOAD_TOO_LARGE = "Error 413: Payload Too Large";
    static final int SMALL_VALUE_BYTES = 64;

    private final TypeNames types;
    private final ValueMapper values = new ValueMapper();
    private final EventJson json = new EventJson();
    private final int maxRecordBytes;

    public EventBuilder(TypeNames types, int maxRecordBytes) {
        this.types = types;
        this.maxRecordBytes = maxRecordBytes;
    }

    /** @throws SQLException when a type OID has to be looked up and the lookup fails */
    public BuiltEvent build(RowChange change, String projectId) throws SQLException {
        Map<String, String> columnTypes = new LinkedHashMap<>();
        Tuple record = null;
        Tuple oldRecord = null;
        if (change.action() == 'I' || change.action() == 'U') {
            record = tuple(change.columns(), columnTypes);
        }
        if (change.action() == 'U' || change.action() == 'D') {
            oldRecord = change.identity().isEmpty() ? null : tuple(change.identity(), columnTypes);
        }
        if (record != null && oldRecord != null) {
            record = withUnchangedToast(record, oldRecord);
        }
        boolean tooLarge = false;
        if (record != null && (change.cut() || tooLarge(record))) {
            record = shrink(record);
            tooLarge = true;
        }
        if (oldRecord != null && (change.cut() || tooLarge(oldRecord))) {
            oldRecord = shrink(oldRecord);
            tooLarge = true;
        }
        return new BuiltEvent(
                change.eventId(),
                projectId,
                change.schema(),
                change.table(),
                change.type(),
                change.commitTimestamp(),
                columnTypes,
                change.pk(),
                record,
                oldRecord,
                tooLarge,
                json);
    }

    /**
     * The same event with both rows cut to their small values and {@code Error 413}: what is
     * published when the full message would exceed what NATS accepts (its {@code max_payload}).
     */
    public BuiltEvent cutToSmallValues(BuiltEvent e) {
        return new BuiltEvent(
                e.eventId(),
                e.projectId(),
                e.schemaName(),
                e.table(),
                e.type(),
                e.commitTimestamp(),
                e.columnTypes(),
                e.primaryKey(),
                e.recordTuple() == null ? null : shrink(e.recordTuple()),
                e.oldRecordTuple() == null ? null : shrink(e.oldRecordTuple()),
                true,
                json);
    }

    private Tuple tuple(List<DecodedColumn> cols, Map<String, String> columnTypes) throws SQLException {
        List<String> names = new ArrayList<>(cols.size());
        List<String> typnames = new ArrayList<>(cols.size());
        List<RawValue> vals = new ArrayList<>(cols.size());
        for (DecodedColumn c : cols) {
            String typname = types.typname(c.typeOid());
            columnTypes.putIfAbsent(c.name(), typname);
            names.add(c.name());
            typnames.add(typname);
            vals.add(c.value());
        }
        return new Tuple(names, typnames, vals);
    }

    /** Unchanged TOAST values are absent from wal2json's new tuple; the old tuple has them. */
    private static Tuple withUnchangedToast(Tuple record, Tuple old) {
        List<String> names = null;
        List<String> typnames = null;
        List<RawValue> vals = null;
        for (int i = 0; i < old.size(); i++) {
            if (record.indexOf(old.names().get(i)) >= 0) {
                continue;
            }
            if (names == null) {
                names = new ArrayList<>(record.names());
                typnames = new ArrayList<>(record.typnames());
                vals = new ArrayList<>(record.values());
            }
            names.add(old.names().get(i));
            typnames.add(old.typnames().get(i));
            vals.add(old.values().get(i));
        }
        return names == null ? record : new Tuple(names, typnames, vals);
    }

    /**
     * Whether the record's JSON exceeds {@code maxRecordBytes}. Most records are decided by a
     * bound on their slices (no value is read); only one near the limit is measured, by writing
     * it to a counter that stops at the limit.
     */
    private boolean tooLarge(Tuple t) {
        long upper = 2;
        long copiedBytes = 0;
        for (int i = 0; i < t.size(); i++) {
            RawValue v = t.values().get(i);
            if (v.kind() == RawValue.Kind.CUT) {
                return true;
            }
            upper += 3L * t.names().get(i).length() + 6;
            if (ValueMapper.copiedAsIs(t.typnames().get(i), v)) {
                upper += v.byteLength() + 4;
                copiedBytes += v.byteLength();
            } else {
                // arrays and timestamps may grow when mapped (at most 3x: {a,b} -> ["a","b"])
                upper += 3L * v.byteLength() + 16;
            }
        }
        if (upper <= maxRecordBytes) {
            return false;
        }
        if (copiedBytes > maxRecordBytes) {
            return true;
        }
        return json.longerThan(t, maxRecordBytes);
    }

    /** The row with only the values whose mapped text has at most {@value #SMALL_VALUE_BYTES} bytes. */
    private Tuple shrink(Tuple t) {
        List<String> names = new ArrayList<>();
        List<String> typnames = new ArrayList<>();
        List<RawValue> vals = new ArrayList<>();
        for (int i = 0; i < t.size(); i++) {
            if (small(t.typnames().get(i), t.values().get(i))) {
                names.add(t.names().get(i));
                typnames.add(t.typnames().get(i));
                vals.add(t.values().get(i));
            }
        }
        return new Tuple(names, typnames, vals);
    }

    private boolean small(String typname, RawValue v) {
        switch (v.kind()) {
            case CUT -> {
                return false;
            }
            case NULL, TRUE, FALSE -> {
                return true;
            }
            default -> {
                // an escape takes at most 6 bytes for one byte of text: longer slices cannot be small
                if (v.byteLength() > 6 * SMALL_VALUE_BYTES) {
                    return false;
                }
                if (v.byteLength() <= SMALL_VALUE_BYTES && ValueMapper.copiedAsIs(typname, v)) {
                    return true;
                }
                JsonNode mapped = values.toJson(typname, v);
                String text = mapped.isTextual() ? mapped.asText() : mapped.toString();
                return text.getBytes(StandardCharsets.UTF_8).length <= SMALL_VALUE_BYTES;
            }
        }
    }
}
