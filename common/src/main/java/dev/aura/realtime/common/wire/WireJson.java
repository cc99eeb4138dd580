package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/**
 * The one Jackson configuration for everything on the wire (NATS messages, KV entries, Phoenix
 * frames, wal2json rows).
 *
 * <p>Numbers stay exact: floating literals decode as {@code BigDecimal} and integers as the
 * smallest fitting type up to {@code BigInteger} (a Postgres {@code int8} above 2^53 or a
 * 30-digit {@code numeric} is never rounded through a double). wal2json writes {@code NaN} and
 * {@code Infinity} for floats unquoted, so non-numeric numbers are accepted on read.
 *
 * <p>Two sets of limits (docs/design.md C13). {@link #mapper()} keeps Jackson's defaults (numbers
 * of at most 1,000 digits, 1,000 levels of nesting) for what clients send. {@link #dataMapper()}
 * reads and writes what carries tenant data out of Postgres (change events, captured messages):
 * every number a {@code numeric} can hold ({@link #MAX_NUMBER_CHARS}) and values nested up to
 * {@link #MAX_VALUE_NESTING} levels, the depth the whole pipeline carries (Jackson's tree
 * serialisation recurses: measured, 6,000 levels fit a 1 MiB thread stack and 10,000 do not).
 * Neither puts the parsed text into its exceptions (no {@code INCLUDE_SOURCE_IN_LOCATION}): an
 * exception message must never quote a tenant's data into a log or a status.
 */
public final class WireJson {
    private WireJson() {}

    /**
     * The most characters of one number: a Postgres {@code numeric} has at most 131,072 digits
     * before the point and 16,383 after it, plus a sign, the point and an exponent.
     */
    public static final int MAX_NUMBER_CHARS = 160_000;

    /** The deepest JSON value the pipeline carries inside a change or a message (docs/design.md C13). */
    public static final int MAX_VALUE_NESTING = 4_096;

    /** Levels the envelopes around a value add ({@code {"data":{"record":{"col": ...}}}} and the like). */
    public static final int ENVELOPE_NESTING = 16;

    /** A new mapper with the wire settings; mappers are thread-safe, create one per component. */
    public static ObjectMapper mapper() {
        return configure(JsonMapper.builder());
    }

    /**
     * A mapper for messages that carry values read from Postgres (the cdc-worker's change events and
     * captured messages): {@link #dataFactory()}'s limits, the wire settings otherwise.
     */
    public static ObjectMapper dataMapper() {
        return configure(JsonMapper.builder(dataFactory()));
    }

    /**
     * A mapper for one value read from Postgres (a {@code json} column, a message's payload):
     * {@link #valueFactory()}'s limits, the wire settings otherwise.
     */
    public static ObjectMapper valueMapper() {
        return configure(JsonMapper.builder(valueFactory()));
    }

    /**
     * A factory whose parsers accept every number a {@code numeric} holds, strings as long as a
     * message, and {@link #MAX_VALUE_NESTING} levels plus {@link #ENVELOPE_NESTING}; its generators
     * write as deep.
     */
    public static JsonFactory dataFactory() {
        return factory(MAX_VALUE_NESTING + ENVELOPE_NESTING);
    }

    /** As {@link #dataFactory()}, for one value: at most {@link #MAX_VALUE_NESTING} levels. */
    public static JsonFactory valueFactory() {
        return factory(MAX_VALUE_NESTING);
    }

    private static JsonFactory factory(int depth) {
        return JsonFactory.builder()
                .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
                .streamReadConstraints(StreamReadConstraints.builder()
                        .maxNumberLength(MAX_NUMBER_CHARS)
                        .maxStringLength(Integer.MAX_VALUE)
                        .maxNestingDepth(depth)
                        .build())
                .streamWriteConstraints(
                        StreamWriteConstraints.builder().maxNestingDepth(depth).build())
                .build();
    }

    /** Writes trees of values read from Postgres; thread-safe and immutable, as Jackson's writers are. */
    private static final com.fasterxml.jackson.databind.ObjectWriter DATA_WRITER =
            dataMapper().writer();

    /**
     * A tree as JSON bytes with the data limits: {@code JsonNode.toString()} uses Jackson's
     * defaults and throws for a value nested over 1,000 levels, which the pipeline carries.
     */
    public static byte[] toBytes(JsonNode tree) {
        try {
            return DATA_WRITER.writeValueAsBytes(tree);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("a value past the data limits cannot be written", e);
        }
    }

    /**
     * Whether a JSON text is nested deeper than {@code maxDepth} levels: what the edge refuses before
     * a payload enters the pipeline (docs/design.md C13). Reads the text as a stream, never as a tree;
     * text that is not JSON is not "deeper" (the caller's parse says what is wrong with it).
     */
    public static boolean deeperThan(byte[] json, int maxDepth) {
        try (com.fasterxml.jackson.core.JsonParser p = DEPTH_FACTORY.createParser(json)) {
            int depth = 0;
            com.fasterxml.jackson.core.JsonToken t;
            while ((t = p.nextToken()) != null) {
                if (t.isStructStart() && ++depth > maxDepth) {
                    return true;
                } else if (t.isStructEnd()) {
                    depth--;
                }
            }
            return false;
        } catch (java.io.IOException e) {
            return false;
        }
    }

    private static final JsonFactory DEPTH_FACTORY = JsonFactory.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxNumberLength(MAX_NUMBER_CHARS)
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNestingDepth(Integer.MAX_VALUE)
                    .build())
            .build();

    private static ObjectMapper configure(JsonMapper.Builder builder) {
        return builder.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
                .serializationInclusion(JsonInclude.Include.ALWAYS)
                .build();
    }
}
