package dev.aura.realtime.cdc.event;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * A change turned into the client payload, before matching (docs/design.md C6).
 *
 * <p>Built by the pipeline from a decoded change, the payload is kept as {@link Tuple}s of
 * undecoded values and written straight into each published message; JSON trees of it
 * ({@link #data()}, {@link #record()}, {@link #oldRecord()}) are made only when something asks
 * (a filter to test, an RLS check reading the key, a test), once, through the {@link Trees}
 * the builder supplied. Thread-safe (the lazy trees are computed at most a few times and never
 * change).
 */
public final class BuiltEvent {
    /** Makes JSON trees of a built event's payload on demand; implemented where values are mapped. */
    public interface Trees {
        /** The {@code data} object as the full view publishes it. */
        ObjectNode data(BuiltEvent event);

        /** One row as an object of column name to mapped value. */
        ObjectNode row(Tuple tuple);
    }

    private final String eventId;
    private final String projectId;
    private final String schemaName;
    private final String table;
    private final String type;
    private final String commitTimestamp;
    private final Map<String, String> columnTypes;
    private final List<String> primaryKey;
    private final Tuple recordTuple;
    private final Tuple oldRecordTuple;
    private final boolean payloadTooLarge;
    private final Trees trees;
    private volatile ObjectNode data;
    private volatile JsonNode record;
    private volatile JsonNode oldRecord;
    private volatile byte[] fullData;

    /**
     * An event of undecoded tuples (built by the pipeline's {@code EventBuilder}).
     *
     * @param columnTypes column name → typname, in the order of the payload's {@code columns}
     * @param record the new row as published (null for DELETE/TRUNCATE)
     * @param oldRecord the old row as published (null for INSERT/TRUNCATE)
     * @param payloadTooLarge whether the rows were cut to their small values (Error 413)
     */
    public BuiltEvent(
            String eventId,
            String projectId,
            String schemaName,
            String table,
            String type,
            String commitTimestamp,
            Map<String, String> columnTypes,
            List<String> primaryKey,
            Tuple record,
            Tuple oldRecord,
            boolean payloadTooLarge,
            Trees trees) {
        this.eventId = eventId;
        this.projectId = projectId;
        this.schemaName = schemaName;
        this.table = table;
        this.type = type;
        this.commitTimestamp = commitTimestamp;
        this.columnTypes = columnTypes;
        this.primaryKey = primaryKey;
        this.recordTuple = record;
        this.oldRecordTuple = oldRecord;
        this.payloadTooLarge = payloadTooLarge;
        this.trees = trees;
    }

    /** {@code <commit LSN>:<ordinal>} */
    public String eventId() {
        return eventId;
    }

    public String projectId() {
        return projectId;
    }

    /** Real schema (for RLS queries; never sent to clients). */
    public String schemaName() {
        return schemaName;
    }

    public String table() {
        return table;
    }

    /** INSERT, UPDATE, DELETE or TRUNCATE. */
    public String type() {
        return type;
    }

    /** ISO 8601 UTC with {@code Z}. */
    public String commitTimestamp() {
        return commitTimestamp;
    }

    /** Column name → typname, in the order of the payload's {@code columns}. */
    public Map<String, String> columnTypes() {
        return columnTypes;
    }

    public List<String> primaryKey() {
        return primaryKey;
    }

    /** The new row as published, undecoded; null for DELETE/TRUNCATE. */
    public Tuple recordTuple() {
        return recordTuple;
    }

    /** The old row as published, undecoded; null for INSERT/TRUNCATE. */
    public Tuple oldRecordTuple() {
        return oldRecordTuple;
    }

    /** Whether the rows were cut to their small values and the payload says {@code Error 413}. */
    public boolean payloadTooLarge() {
        return payloadTooLarge;
    }

    /** The postgres_changes {@code data} object as the full view publishes it (made on first use). */
    public ObjectNode data() {
        ObjectNode d = data;
        if (d == null) {
            d = trees.data(this);
            data = d;
        }
        return d;
    }

    /** The new row as sent (null for DELETE/TRUNCATE); made on first use. */
    public JsonNode record() {
        JsonNode r = record;
        if (r == null && recordTuple != null) {
            r = trees.row(recordTuple);
            record = r;
        }
        return r;
    }

    /** The old row as sent (null for INSERT/TRUNCATE); made on first use. */
    public JsonNode oldRecord() {
        JsonNode r = oldRecord;
        if (r == null && oldRecordTuple != null) {
            r = trees.row(oldRecordTuple);
            oldRecord = r;
        }
        return r;
    }

    /** The row a filter is tested against: the new row, or the old one for DELETE (Supabase's rule). */
    public JsonNode filterRow() {
        return "DELETE".equals(type) ? oldRecord() : record();
    }

    /** The full view's {@code data} JSON, cached by the renderer so that several messages share it. */
    public byte[] fullDataJson() {
        return fullData;
    }

    /** Caches the full view's {@code data} JSON (the renderer's). */
    public void fullDataJson(byte[] json) {
        fullData = json;
    }
}
