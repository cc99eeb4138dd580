package dev.aura.realtime.cdc.decode;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigDecimal;
import java.util.List;
import java.util.Set;

/**
 * Writes a wal2json value as the JSON value Supabase Realtime sends (what {@code to_jsonb} would
 * give): numbers exact, {@code json/jsonb} as JSON values, arrays as JSON arrays, bytea as
 * {@code \x...}, timestamps in ISO 8601 with {@code T}. Stateless and thread-safe.
 *
 * <p>wal2json prints numeric types unquoted (exact digits), {@code bool} as true/false, and
 * every other type as its text output in a JSON string; float {@code NaN}/{@code Infinity}
 * arrive as JSON {@code null} (wal2json writes null for non-finite floats), which we pass on.
 *
 * <p>Most types need no mapping at all ({@link #copiedAsIs}): their values are copied from the
 * wal2json row into the event byte for byte, never decoded (docs/design.md C6).
 */
public final class ValueMapper {
    private static final Set<String> NUMERIC = Set.of("int2", "int4", "int8", "float4", "float8", "numeric", "oid");
    private static final Set<String> MAPPED = Set.of("json", "jsonb", "bytea", "timestamptz", "timestamp", "bool");
    /** Every number a numeric holds, values at most {@link WireJson#MAX_VALUE_NESTING} deep (C13). */
    private static final JsonFactory JSON = WireJson.valueFactory();
    /** {@code \x} as it appears JSON-escaped in a wal2json string. */
    private static final byte[] ESCAPED_BACKSLASH_X = {'\\', '\\', 'x'};

    private final ObjectMapper mapper = WireJson.valueMapper();

    /** True when a value of this type is published exactly as wal2json wrote it. */
    public static boolean copiedAsIs(String typname, RawValue value) {
        if (value.kind() != RawValue.Kind.STRING) {
            return true;
        }
        return !typname.startsWith("_") && !MAPPED.contains(typname) && !NUMERIC.contains(typname);
    }

    /**
     * Writes the value mapped by its type.
     *
     * @param typname the column's {@code pg_type.typname}
     */
    public void write(JsonGenerator g, String typname, RawValue value) throws IOException {
        if (copiedAsIs(typname, value)) {
            value.writeTo(g); // strings copied escaped; numbers, booleans and null as written
            return;
        }
        if ("bytea".equals(typname) && value.startsWith(ESCAPED_BACKSLASH_X)) {
            value.writeTo(g); // bytea's hex output, "\\x..." once JSON-escaped: copied as it is
            return;
        }
        writeText(g, typname, value.text(), true);
    }

    private void writeText(JsonGenerator g, String typname, String text, boolean topLevel) throws IOException {
        if (typname.startsWith("_") && topLevel) {
            List<Object> items;
            try {
                items = PgArrayParser.parse(text, typname.equals("_box") ? ';' : ',');
            } catch (IllegalArgumentException e) {
                g.writeString(text);
                return;
            }
            writeArray(g, typname.substring(1), items);
            return;
        }
        switch (typname) {
            case "json", "jsonb" -> writeJsonText(g, text);
            case "bytea" -> g.writeString(text.startsWith("\\x") ? text : "\\x" + text);
            case "timestamptz" -> g.writeString(isoTimestamptz(text));
            case "timestamp" -> g.writeString(text.replace(' ', 'T'));
            case "bool" -> {
                if ("t".equals(text) || "true".equals(text)) {
                    g.writeBoolean(true);
                } else if ("f".equals(text) || "false".equals(text)) {
                    g.writeBoolean(false);
                } else {
                    g.writeString(text);
                }
            }
            default -> {
                if (NUMERIC.contains(typname)) {
                    try {
                        g.writeNumber(new BigDecimal(text));
                    } catch (NumberFormatException e) {
                        g.writeString(text); // NaN, Infinity inside arrays
                    }
                } else {
                    g.writeString(text);
                }
            }
        }
    }

    /**
     * Embeds a json/jsonb value as JSON; text that does not parse (never expected) stays a string. A
     * value past the pipeline's limits ({@link StreamConstraintsException}: nesting) is not turned
     * into a string: it fails the change, which becomes its project's {@code too_large} fault (C13).
     */
    private void writeJsonText(JsonGenerator g, String text) throws IOException {
        // Two passes over the text, no buffer: the first checks it is exactly one JSON value
        // (a TokenBuffer would add its own, default, nesting limit of 1,000 levels).
        try (JsonParser p = JSON.createParser(text)) {
            if (p.nextToken() == null) {
                g.writeString(text);
                return;
            }
            p.skipChildren();
            if (p.nextToken() != null) {
                g.writeString(text);
                return;
            }
        } catch (StreamConstraintsException e) {
            throw e;
        } catch (IOException e) {
            g.writeString(text);
            return;
        }
        try (JsonParser p = JSON.createParser(text)) {
            p.nextToken();
            g.copyCurrentStructureExact(p);
        }
    }

    private void writeArray(JsonGenerator g, String elementType, List<Object> items) throws IOException {
        g.writeStartArray();
        for (Object item : items) {
            if (item == null) {
                g.writeNull();
            } else if (item instanceof List<?> nested) {
                @SuppressWarnings("unchecked")
                List<Object> inner = (List<Object>) nested;
                writeArray(g, elementType, inner);
            } else {
                writeText(g, elementType, (String) item, false);
            }
        }
        g.writeEndArray();
    }

    /** The mapped value as a JSON tree (for filters and RLS keys; the event itself is written, not built). */
    public JsonNode toJson(String typname, RawValue value) {
        try {
            ByteArrayBuilder out = new ByteArrayBuilder(64);
            try (JsonGenerator g = JSON.createGenerator(out)) {
                write(g, typname, value);
            }
            return mapper.readTree(out.toByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** {@code 2026-01-02 03:04:05.123456+00} → {@code 2026-01-02T03:04:05.123456+00:00} (to_jsonb's form). */
    static String isoTimestamptz(String text) {
        String t = text.replace(' ', 'T');
        int plus = Math.max(t.lastIndexOf('+'), t.lastIndexOf('-'));
        if (plus > 10 && t.length() - plus == 3) {
            return t + ":00";
        }
        return t;
    }
}
