package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.StreamReadFeature;
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
 */
public final class WireJson {
    private WireJson() {}

    /** A new mapper with the wire settings; mappers are thread-safe, create one per component. */
    public static ObjectMapper mapper() {
        return JsonMapper.builder()
                .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
                .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
                .enable(StreamReadFeature.INCLUDE_SOURCE_IN_LOCATION)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS)
                .serializationInclusion(JsonInclude.Include.ALWAYS)
                .build();
    }
}
