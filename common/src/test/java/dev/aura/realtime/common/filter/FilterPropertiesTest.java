package dev.aura.realtime.common.filter;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Issue 9: the filter parser takes any text a client sends, and fails only with FilterException. */
class FilterPropertiesTest {

    @Provide
    Arbitrary<String> filterish() {
        Arbitrary<String> ops = Arbitraries.of(
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
                "isdistinct",
                "not.eq",
                "not.in",
                "not.like",
                "",
                "EQ");
        Arbitrary<String> text =
                Arbitraries.strings().withChars("ab=.,()\"\\ \u00e9\ud800-1").ofMaxLength(12);
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(40),
                net.jqwik.api.Combinators.combine(text, ops, text).as((c, op, v) -> c + "=" + op + "." + v),
                net.jqwik.api.Combinators.combine(text, text).as((c, v) -> c + "=in.(" + v + ")"));
    }

    @Property(tries = 3000)
    void anyTextParsesOrFailsWithFilterException(@ForAll("filterish") String text) {
        Filter f;
        try {
            f = Filter.parse(text);
        } catch (FilterException expected) {
            return;
        }
        assertThat(f.column()).isNotEmpty();
        assertThat(f.values()).isNotEmpty().hasSizeLessThanOrEqualTo(Filter.MAX_IN_VALUES);
        // evaluating a parsed filter against any record never throws either
        var record = JsonNodeFactory.instance.objectNode().put(f.column(), text).put("n", 1);
        for (String type : List.of("text", "int4", "int8", "numeric", "bool", "uuid", "timestamptz", "jsonb")) {
            f.matches(record, type);
            try {
                f.checkValues(type);
            } catch (FilterException fine) {
                // a value that does not read as the column's type is refused at join
            }
        }
    }

    @Property(tries = 500)
    void anyValueQuotedAsTheClientQuotesItRoundTrips(
            @ForAll("plainValue") String value, @ForAll @IntRange(min = 0, max = 5) int op, @ForAll boolean not)
            throws Exception {
        FilterOp[] ops = {FilterOp.EQ, FilterOp.NEQ, FilterOp.LT, FilterOp.LTE, FilterOp.GT, FilterOp.GTE};
        String text = "col=" + (not ? "not." : "") + ops[op].wire() + "." + Filter.quoteIfNeeded(value);
        Filters f = Filters.parse(text + ",other=eq." + Filter.quoteIfNeeded(value));
        assertThat(f.conditions())
                .containsExactly(
                        new Filter("col", ops[op], not, List.of(value)),
                        new Filter("other", FilterOp.EQ, false, List.of(value)));
        assertThat(f.toString()).isEqualTo(text + ",other=eq." + Filter.quoteIfNeeded(value));
    }

    @Provide
    Arbitrary<String> plainValue() {
        return Arbitraries.strings().all().ofMaxLength(30);
    }

    @Property(tries = 500)
    void inListsOfQuotedValuesRoundTrip(@ForAll("inValues") List<String> values) throws Exception {
        StringBuilder text = new StringBuilder("c=in.(");
        for (int i = 0; i < values.size(); i++) {
            text.append(i == 0 ? "" : ",")
                    .append('"')
                    .append(values.get(i).replace("\\", "\\\\").replace("\"", "\\\""))
                    .append('"');
        }
        assertThat(Filter.parse(text.append(')').toString()).values()).containsExactlyElementsOf(values);
    }

    @Provide
    Arbitrary<List<String>> inValues() {
        return Arbitraries.strings().all().ofMaxLength(10).list().ofMinSize(1).ofMaxSize(Filter.MAX_IN_VALUES);
    }
}
