package dev.aura.realtime.cdc.pipeline;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.decode.ValueMapper;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Tuple;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;

/**
 * Writes the postgres_changes {@code data} object of a built event, as one {@link View} sees it,
 * straight from the event's undecoded tuples into a {@link JsonGenerator} (docs/design.md C6,
 * C7): no JSON tree, values mapped by type as they are written. Also makes the trees of
 * {@link BuiltEvent.Trees} for the few readers that need one. Thread-safe.
 */
final class EventJson implements BuiltEvent.Trees {
    /** A generator that never closes what it did not open, so callers can append raw bytes. */
    static final JsonFactory FACTORY = WireJson.dataFactory()
            .rebuild()
            .disable(StreamWriteFeature.AUTO_CLOSE_CONTENT)
            .build();

    private final ValueMapper values = new ValueMapper();
    /** Trees of the values: every numeric, values as deep as the pipeline carries (C13). */
    private final ObjectMapper mapper = WireJson.dataMapper();

    /** {@code {schema, table, commit_timestamp, type, columns, record, old_record, errors}} as {@code view} sees it. */
    void writeData(JsonGenerator g, BuiltEvent e, View view) throws IOException {
        g.writeStartObject();
        g.writeStringField("schema", "public");
        g.writeStringField("table", e.table());
        g.writeStringField("commit_timestamp", e.commitTimestamp());
        g.writeStringField("type", e.type());
        g.writeArrayFieldStart("columns");
        for (Map.Entry<String, String> c : e.columnTypes().entrySet()) {
            if (view.columns() == null || view.columns().contains(c.getKey())) {
                g.writeStartObject();
                g.writeStringField("name", c.getKey());
                g.writeStringField("type", c.getValue());
                g.writeEndObject();
            }
        }
        g.writeEndArray();
        if (e.recordTuple() != null) {
            g.writeFieldName("record");
            writeRow(g, e.recordTuple(), view, null);
        }
        if (e.oldRecordTuple() != null) {
            g.writeFieldName("old_record");
            writeRow(g, e.oldRecordTuple(), view, view.oldRecordKeyOnly() ? e.primaryKey() : null);
        }
        g.writeFieldName("errors");
        if (!e.payloadTooLarge() && view.errors().isEmpty()) {
            g.writeNull();
        } else {
            g.writeStartArray();
            if (e.payloadTooLarge()) {
                g.writeString(EventBuilder.PAYLOAD_TOO_LARGE);
            }
            for (String error : view.errors()) {
                g.writeString(error);
            }
            g.writeEndArray();
        }
        g.writeEndObject();
    }

    /** One row, limited to the view's columns and, when {@code keyOnly} is given, to those. */
    void writeRow(JsonGenerator g, Tuple t, View view, List<String> keyOnly) throws IOException {
        g.writeStartObject();
        for (int i = 0; i < t.size(); i++) {
            String name = t.names().get(i);
            if ((view.columns() != null && !view.columns().contains(name))
                    || (keyOnly != null && !keyOnly.contains(name))) {
                continue;
            }
            g.writeFieldName(name);
            values.write(g, t.typnames().get(i), t.values().get(i));
        }
        g.writeEndObject();
    }

    /**
     * Whether the row's JSON is longer than {@code limit} bytes, measured by writing it to a
     * counter that gives up at the limit: a huge value is never written whole.
     */
    boolean longerThan(Tuple t, long limit) {
        CountingSink sink = new CountingSink(limit);
        try (JsonGenerator g = FACTORY.createGenerator(sink)) {
            writeRow(g, t, View.FULL, null);
        } catch (CountingSink.LimitReached e) {
            return true;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return sink.count > limit;
    }

    @Override
    public ObjectNode data(BuiltEvent event) {
        ByteArrayBuilder out = new ByteArrayBuilder(512);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            writeData(g, event, View.FULL);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return read(out.toByteArray());
    }

    @Override
    public ObjectNode row(Tuple tuple) {
        ByteArrayBuilder out = new ByteArrayBuilder(256);
        try (JsonGenerator g = FACTORY.createGenerator(out)) {
            writeRow(g, tuple, View.FULL, null);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return read(out.toByteArray());
    }

    private ObjectNode read(byte[] json) {
        try {
            return (ObjectNode) mapper.readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Counts bytes written and stops the writer once more than a limit was written. */
    private static final class CountingSink extends OutputStream {
        /** Thrown to stop writing; carries no stack trace. */
        static final class LimitReached extends IOException {
            LimitReached() {
                super("limit reached", null);
            }

            @Override
            public synchronized Throwable fillInStackTrace() {
                return this;
            }
        }

        private final long limit;
        long count;

        CountingSink(long limit) {
            this.limit = limit;
        }

        @Override
        public void write(int b) throws IOException {
            add(1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            add(len);
        }

        private void add(int n) throws LimitReached {
            count += n;
            if (count > limit) {
                throw new LimitReached();
            }
        }
    }
}
