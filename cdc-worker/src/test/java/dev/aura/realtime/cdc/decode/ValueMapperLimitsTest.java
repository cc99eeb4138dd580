package dev.aura.realtime.cdc.decode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.core.util.ByteArrayBuilder;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.common.wire.WireJson;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * What a value may be (docs/design.md C13): every number a {@code numeric} holds, and JSON nested
 * up to {@link WireJson#MAX_VALUE_NESTING} levels; deeper is refused with Jackson's constraint
 * exception (the change becomes its project's {@code too_large} fault), never turned into a string.
 */
class ValueMapperLimitsTest {
    private final ValueMapper values = new ValueMapper();

    private String write(String typname, String text) throws Exception {
        byte[] escaped = WireJson.mapper().writeValueAsBytes(text); // as wal2json prints a string value
        RawValue v = RawValue.string(escaped, 1, escaped.length - 2);
        ByteArrayBuilder out = new ByteArrayBuilder();
        try (JsonGenerator g = WireJson.dataFactory().createGenerator(out)) {
            values.write(g, typname, v);
        }
        return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }

    private static String nested(int depth) {
        return "[".repeat(depth) + "1" + "]".repeat(depth);
    }

    @Test
    void jsonAsDeepAsThePipelineCarriesIsWrittenAsJson() throws Exception {
        assertThat(write("jsonb", nested(1_001))).isEqualTo(nested(1_001));
        assertThat(write("json", nested(WireJson.MAX_VALUE_NESTING))).isEqualTo(nested(WireJson.MAX_VALUE_NESTING));
    }

    @Test
    void deeperJsonIsRefusedNotTurnedIntoAString() {
        assertThatThrownBy(() -> write("jsonb", nested(WireJson.MAX_VALUE_NESTING + 1)))
                .isInstanceOf(StreamConstraintsException.class);
    }

    @Test
    void aNumericOfEveryDigitPostgresAllowsIsWrittenExactly() throws Exception {
        String digits = "9".repeat(131_072) + "." + "1".repeat(16_383);
        byte[] row = digits.getBytes(StandardCharsets.US_ASCII);
        RawValue v = RawValue.literal(RawValue.Kind.NUMBER, row, 0, row.length);
        ByteArrayBuilder out = new ByteArrayBuilder();
        try (JsonGenerator g = WireJson.dataFactory().createGenerator(out)) {
            values.write(g, "numeric", v);
        }
        assertThat(new String(out.toByteArray(), StandardCharsets.US_ASCII)).isEqualTo(digits);
        assertThat(values.toJson("numeric", v).decimalValue().toPlainString()).isEqualTo(digits);
    }
}
