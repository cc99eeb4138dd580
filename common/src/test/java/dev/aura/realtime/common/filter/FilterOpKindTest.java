package dev.aura.realtime.common.filter;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.filter.FilterOp.Kind;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Pins each operator's kind and wire name: the kind is a property of the constant, so reordering
 * the constants changes nothing here, and a new operator fails this test until it is listed.
 */
class FilterOpKindTest {

    @Test
    void everyOperatorHasItsKind() {
        Map<FilterOp, Kind> expected = new EnumMap<>(FilterOp.class);
        expected.put(FilterOp.EQ, Kind.COMPARISON);
        expected.put(FilterOp.NEQ, Kind.COMPARISON);
        expected.put(FilterOp.LT, Kind.COMPARISON);
        expected.put(FilterOp.LTE, Kind.COMPARISON);
        expected.put(FilterOp.GT, Kind.COMPARISON);
        expected.put(FilterOp.GTE, Kind.COMPARISON);
        expected.put(FilterOp.IN, Kind.COMPARISON);
        expected.put(FilterOp.LIKE, Kind.PATTERN);
        expected.put(FilterOp.ILIKE, Kind.PATTERN);
        expected.put(FilterOp.MATCH, Kind.PATTERN);
        expected.put(FilterOp.IMATCH, Kind.PATTERN);
        expected.put(FilterOp.IS, Kind.TRUTH_TEST);
        expected.put(FilterOp.ISDISTINCT, Kind.DISTINCT_FROM);

        Map<FilterOp, Kind> actual = Arrays.stream(FilterOp.values())
                .collect(Collectors.toMap(
                        Function.identity(), FilterOp::kind, (a, b) -> a, () -> new EnumMap<>(FilterOp.class)));
        assertThat(actual).isEqualTo(expected);
    }

    @Test
    void isPatternFollowsTheKind() {
        for (FilterOp op : FilterOp.values()) {
            assertThat(op.isPattern()).as(op.wire()).isEqualTo(op.kind() == Kind.PATTERN);
        }
    }

    @Test
    void wireNamesRoundTrip() {
        assertThat(Arrays.stream(FilterOp.values()).map(FilterOp::wire))
                .containsExactlyInAnyOrder(
                        "eq",
                        "neq",
                        "lt",
                        "lte",
                        "gt",
                        "gte",
                        "in",
                        "like",
                        "ilike",
                        "match",
                        "imatch",
                        "is",
                        "isdistinct");
        for (FilterOp op : FilterOp.values()) {
            assertThat(FilterOp.fromWire(op.wire())).isSameAs(op);
        }
        assertThat(FilterOp.fromWire("EQ")).isNull();
    }
}
