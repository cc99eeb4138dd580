package dev.aura.realtime.cdc.decode;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.common.lsn.Lsn;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Issue 9, hostile input on the wal2json decoding path: whatever text arrives in the peek's
 * {@code data} column, {@link Wal2JsonDecoder} returns a message or throws
 * {@link MalformedWalRowException}; {@link PgArrayParser} returns a list or throws
 * {@link IllegalArgumentException}; {@link ValueMapper} maps any JSON value of any type name.
 * Array literals written the way Postgres writes them parse back to their elements.
 */
class DecoderPropertiesTest {
    private final ValueMapper values = new ValueMapper();

    @Provide
    Arbitrary<String> walRows() {
        Arbitrary<String> action =
                Arbitraries.of("\"B\"", "\"C\"", "\"I\"", "\"U\"", "\"D\"", "\"T\"", "\"M\"", "1", "null", "\"\"");
        Arbitrary<String> field = Arbitraries.of(
                "\"lsn\":\"0/16B3748\"",
                "\"lsn\":\"garbage\"",
                "\"lsn\":7",
                "\"nextlsn\":\"FFFFFFFF/FFFFFFFF\"",
                "\"timestamp\":\"2026-01-01 00:00:00+00\"",
                "\"schema\":\"project_x\"",
                "\"table\":\"t\"",
                "\"table\":null",
                "\"columns\":[{\"name\":\"id\",\"type\":\"int4\",\"value\":1}]",
                "\"columns\":[{\"name\":\"a\",\"typeoid\":\"x\",\"value\":{}}]",
                "\"columns\":{}",
                "\"columns\":[1,null,\"x\"]",
                "\"identity\":[{\"name\":\"id\"}]",
                "\"pk\":[{\"name\":\"id\",\"type\":\"integer\"}]",
                "\"pk\":\"id\"",
                "\"pk\":[null]");
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(80),
                net.jqwik.api.Combinators.combine(action, field.list().ofMaxSize(6))
                        .as((a, f) -> "{\"action\":" + a + (f.isEmpty() ? "" : "," + String.join(",", f)) + "}"));
    }

    @Property(tries = 3000)
    void anyRowDecodesOrIsMalformed(@ForAll("walRows") String data) {
        Wal2JsonDecoder decoder = new Wal2JsonDecoder();
        try {
            assertThat(EventFixture.decode(decoder, Lsn.parse("0/16B3748"), data))
                    .isNotNull();
        } catch (MalformedWalRowException expected) {
            // logged with the LSN by the poller
        }
    }

    @Property(tries = 3000)
    void anyArrayTextParsesOrIsRefused(@ForAll("arrayish") String text) {
        try {
            assertThat(PgArrayParser.parse(text, ',')).isNotNull();
        } catch (IllegalArgumentException expected) {
            // not an array literal
        }
    }

    @Provide
    Arbitrary<String> arrayish() {
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(40),
                Arbitraries.strings().withChars("{}\",\\ aNULL1=[]:;").ofMaxLength(30));
    }

    @Property(tries = 2000)
    void arraysWrittenAsPostgresDoesParseBack(@ForAll("elements") List<String> elements) {
        StringBuilder text = new StringBuilder("{");
        for (int i = 0; i < elements.size(); i++) {
            String e = elements.get(i);
            text.append(i == 0 ? "" : ",");
            if (e == null) {
                text.append("NULL");
            } else {
                text.append('"')
                        .append(e.replace("\\", "\\\\").replace("\"", "\\\""))
                        .append('"');
            }
        }
        List<Object> parsed = PgArrayParser.parse(text.append('}').toString(), ',');
        List<Object> expected = new ArrayList<>(elements);
        assertThat(parsed).containsExactlyElementsOf(expected);
    }

    @Provide
    Arbitrary<List<String>> elements() {
        return Arbitraries.strings().all().ofMaxLength(8).injectNull(0.1).list().ofMaxSize(8);
    }

    @Property(tries = 3000)
    void anyValueOfAnyTypeMaps(@ForAll("typnames") String typname, @ForAll("jsonValues") JsonNode value) {
        assertThat(values.toJson(typname, EventFixture.raw(value))).isNotNull();
    }

    @Provide
    Arbitrary<String> typnames() {
        return Arbitraries.oneOf(
                Arbitraries.of(
                        "int2",
                        "int4",
                        "int8",
                        "float4",
                        "float8",
                        "numeric",
                        "oid",
                        "bool",
                        "text",
                        "json",
                        "jsonb",
                        "bytea",
                        "timestamptz",
                        "timestamp",
                        "date",
                        "_int4",
                        "_text",
                        "_jsonb",
                        "_float8",
                        "_numeric",
                        "_bool",
                        "_box",
                        "mood",
                        "_mood",
                        "",
                        "_"),
                Arbitraries.strings().all().ofMaxLength(10));
    }

    @Provide
    Arbitrary<JsonNode> jsonValues() {
        JsonNodeFactory f = JsonNodeFactory.instance;
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(30).map(f::textNode),
                Arbitraries.strings()
                        .withChars("{}\",\\ 1.5e-NaInfity[]")
                        .ofMaxLength(20)
                        .map(f::textNode),
                Arbitraries.longs().map(f::numberNode),
                Arbitraries.doubles().map(f::numberNode),
                Arbitraries.bigDecimals().map(f::numberNode),
                Arbitraries.of(
                        f.nullNode(),
                        f.booleanNode(true),
                        f.objectNode(),
                        f.arrayNode(),
                        f.arrayNode().add(1).add("x")));
    }
}
