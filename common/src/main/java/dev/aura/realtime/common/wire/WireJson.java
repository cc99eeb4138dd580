package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamWriteConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
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

    private static ObjectMapper configure(JsonMapper.Builder builder) {
        return builder.enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
                .serializationInclusion(JsonInclude.Include.ALWAYS)
                .build();
    }
}
