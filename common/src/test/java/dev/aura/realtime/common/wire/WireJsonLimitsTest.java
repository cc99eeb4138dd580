package dev.aura.realtime.common.wire;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The two sets of JSON limits (docs/design.md C13). */
class WireJsonLimitsTest {
    private static String nested(int depth) {
        return "[".repeat(depth) + "1" + "]".repeat(depth);
    }

    @Test
    void dataCarriesEveryNumericAndTheValueNestingPlusItsEnvelope() throws Exception {
        String digits = "9".repeat(131_072) + "." + "1".repeat(16_383);
        JsonNode n = WireJson.dataMapper().readTree("{\"n\":" + digits + "}");
        assertThat(n.get("n").decimalValue().toPlainString()).isEqualTo(digits);
        int deepest = WireJson.MAX_VALUE_NESTING + WireJson.ENVELOPE_NESTING;
        JsonNode deep = WireJson.dataMapper().readTree(nested(deepest));
        assertThat(new String(WireJson.toBytes(deep), StandardCharsets.UTF_8)).isEqualTo(nested(deepest));
        assertThatThrownBy(() -> WireJson.dataMapper().readTree(nested(deepest + 1)))
                .isInstanceOf(StreamConstraintsException.class);
    }

    @Test
    void aValueIsAtMostMaxValueNestingDeep() throws Exception {
        assertThat(WireJson.valueMapper().readTree(nested(WireJson.MAX_VALUE_NESTING)))
                .isNotNull();
        assertThatThrownBy(() -> WireJson.valueMapper().readTree(nested(WireJson.MAX_VALUE_NESTING + 1)))
                .isInstanceOf(StreamConstraintsException.class);
    }

    @Test
    void clientFramesKeepJacksonsDefaults() {
        assertThatThrownBy(() -> WireJson.mapper().readTree(nested(1_001)))
                .isInstanceOf(StreamConstraintsException.class);
    }

    @Test
    void theEdgeMeasuresDepthWithoutATree() {
        byte[] ok = nested(WireJson.MAX_VALUE_NESTING).getBytes(StandardCharsets.US_ASCII);
        byte[] deep = ("{\"a\":" + nested(WireJson.MAX_VALUE_NESTING) + "}").getBytes(StandardCharsets.US_ASCII);
        assertThat(WireJson.deeperThan(ok, WireJson.MAX_VALUE_NESTING)).isFalse();
        assertThat(WireJson.deeperThan(deep, WireJson.MAX_VALUE_NESTING)).isTrue();
        assertThat(WireJson.deeperThan(nested(100_000).getBytes(StandardCharsets.US_ASCII), 4_096))
                .isTrue();
        assertThat(WireJson.deeperThan("{\"a\": [1, {\"b\": 2}], \"c\": 3}".getBytes(StandardCharsets.US_ASCII), 3))
                .isFalse();
    }

    @Test
    void noParsedTextInExceptions() {
        assertThatThrownBy(() -> WireJson.mapper().readTree("{\"secret-text\": 1E+99999999999999999999x}"))
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("secret-text"));
    }
}
