package dev.aura.realtime.cdc.decode;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.CdcFixture;
import dev.aura.realtime.cdc.CdcFixtureAndLogs;
import dev.aura.realtime.cdc.CdcSources;
import dev.aura.realtime.cdc.config.CdcSource;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/** C6: wal2json rows become Supabase-shaped events with exact values and typnames. */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@EnumSource(CdcSource.class)
class DecodingIT extends CdcFixtureAndLogs {
    @Parameter
    CdcSource source;

    @BeforeEach
    void startWorker() throws Exception {
        fx.startWorker(CdcSources.env(source));
        fx.createProject();
    }

    private void enableAndSubscribe(String table) throws Exception {
        fx.enable(table);
        fx.subscribe(table, "*", null);
        fx.awaitCaptured(table);
    }

    @Test
    void everyTypeKeepsItsValueAndTypname() throws Exception {
        fx.sql(
                "CREATE TYPE \"" + fx.schema + "\".\"Mood\" AS ENUM ('happy', 'sad')",
                "CREATE TABLE " + fx.table("types")
                        + "(id int8 PRIMARY KEY, i2 int2, i4 int4, i8 int8, n numeric, f8 float8, "
                        + "f4 float4, nan float8, inf float8, b bool, t text, j json, jb jsonb, ta text[], ia int[], by bytea, "
                        + "u uuid, d date, ts timestamp, tstz timestamptz, iv interval, mood \"" + fx.schema
                        + "\".\"Mood\", "
                        + "twice int8 GENERATED ALWAYS AS (i8 * 2) STORED, nothing text)");
        enableAndSubscribe("types");
        fx.sql("INSERT INTO " + fx.table("types")
                + "(id, i2, i4, i8, n, f8, f4, nan, inf, b, t, j, jb, ta, ia, by, u, d, ts, tstz, iv, mood, nothing) "
                + "VALUES (1, -32768, 2147483647, 9007199254740993, 123456789012345678901234567890.5, 1.7976931348623157e308, 1.5, "
                + "'NaN', '-Infinity', true, E'say \"hi\"\\nline2 \\\\ 😀', '{\"a\": [1, 2.50, {\"b\": null}]}', '{\"k\": \"v\", \"n\": 1}', "
                + "ARRAY['a b', 'c,d', NULL, '\"q\"'], '{1,2,3}', '\\x0001ff', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '2026-02-28', "
                + "'2026-02-28 23:59:59.5', '2026-02-28 23:59:59.5+02', '1 day 02:03:04', 'happy', NULL)");
        CdcFixture.Received got =
                fx.await(r -> r.size() == 1, Duration.ofSeconds(10)).get(0);
        JsonNode r = got.data().get("record");

        assertThat(got.raw())
                .contains(
                        "\"i8\":9007199254740993",
                        "\"n\":123456789012345678901234567890.5",
                        "\"twice\":18014398509481986");
        assertThat(r.get("i2").asInt()).isEqualTo(-32768);
        assertThat(r.get("i4").asInt()).isEqualTo(2147483647);
        assertThat(r.get("i8").bigIntegerValue()).isEqualTo(new BigInteger("9007199254740993"));
        assertThat(r.get("f8").decimalValue()).isEqualByComparingTo(new BigDecimal("1.7976931348623157e308"));
        assertThat(r.get("f4").asDouble()).isEqualTo(1.5);
        // wal2json writes non-finite floats as JSON null; we pass that on (docs/operations.md, Decoding).
        assertThat(r.get("nan").isNull()).isTrue();
        assertThat(r.get("inf").isNull()).isTrue();
        assertThat(r.get("b").isBoolean()).isTrue();
        assertThat(r.get("b").asBoolean()).isTrue();
        assertThat(r.get("t").asText()).isEqualTo("say \"hi\"\nline2 \\ 😀");
        assertThat(r.get("j").isObject()).isTrue();
        assertThat(r.get("j").get("a").get(2).get("b").isNull()).isTrue();
        assertThat(r.get("jb").get("k").asText()).isEqualTo("v");
        assertThat(r.get("ta").isArray()).isTrue();
        assertThat(r.get("ta").toString()).isEqualTo("[\"a b\",\"c,d\",null,\"\\\"q\\\"\"]");
        assertThat(r.get("ia").toString()).isEqualTo("[1,2,3]");
        assertThat(r.get("by").asText()).isEqualTo("\\x0001ff");
        assertThat(r.get("u").asText()).isEqualTo("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11");
        assertThat(r.get("d").asText()).isEqualTo("2026-02-28");
        assertThat(r.get("ts").asText()).isEqualTo("2026-02-28T23:59:59.5");
        assertThat(r.get("tstz").asText()).isEqualTo("2026-02-28T21:59:59.5+00:00");
        assertThat(r.get("iv").asText()).isEqualTo("1 day 02:03:04");
        assertThat(r.get("mood").asText()).isEqualTo("happy");
        assertThat(r.get("twice").asLong()).isEqualTo(18014398509481986L);
        assertThat(r.has("nothing")).isTrue();
        assertThat(r.get("nothing").isNull()).isTrue();

        Map<String, String> types = new HashMap<>();
        got.data()
                .get("columns")
                .forEach(c -> types.put(c.get("name").asText(), c.get("type").asText()));
        assertThat(types)
                .containsEntry("i2", "int2")
                .containsEntry("i4", "int4")
                .containsEntry("i8", "int8")
                .containsEntry("n", "numeric")
                .containsEntry("f8", "float8")
                .containsEntry("f4", "float4")
                .containsEntry("b", "bool")
                .containsEntry("t", "text")
                .containsEntry("j", "json")
                .containsEntry("jb", "jsonb")
                .containsEntry("ta", "_text")
                .containsEntry("ia", "_int4")
                .containsEntry("by", "bytea")
                .containsEntry("u", "uuid")
                .containsEntry("d", "date")
                .containsEntry("ts", "timestamp")
                .containsEntry("tstz", "timestamptz")
                .containsEntry("iv", "interval")
                .containsEntry("mood", "Mood")
                .containsEntry("twice", "int8")
                .containsEntry("nothing", "text");
        assertThat(got.data().get("commit_timestamp").asText())
                .matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(\\.\\d+)?Z");
    }

    @Test
    void anUpdateLeavingAToastedColumnUnchangedStillDeliversItAndTruncateIsAnEvent() throws Exception {
        fx.sql(
                "CREATE TABLE " + fx.table("toasty") + "(id int PRIMARY KEY, big text, n int)",
                "ALTER TABLE " + fx.table("toasty") + " ALTER big SET STORAGE EXTERNAL",
                "ALTER TABLE " + fx.table("toasty") + " REPLICA IDENTITY FULL");
        enableAndSubscribe("toasty");
        fx.sql(
                "INSERT INTO " + fx.table("toasty")
                        + " SELECT 1, string_agg(md5(g::text), '') , 1 FROM generate_series(1, 200) g",
                "UPDATE " + fx.table("toasty") + " SET n = 2",
                "TRUNCATE " + fx.table("toasty"));
        String big = fx.queryOne("SELECT string_agg(md5(g::text), '') FROM generate_series(1, 200) g");
        assertThat(big).hasSize(6400);
        var got = fx.await(r -> r.size() == 3, Duration.ofSeconds(10));
        assertThat(got).extracting(e -> e.data().get("type").asText()).containsExactly("INSERT", "UPDATE", "TRUNCATE");
        JsonNode update = got.get(1).data();
        assertThat(update.get("record").get("n").asInt()).isEqualTo(2);
        assertThat(update.get("record").get("big").asText()).isEqualTo(big);
        assertThat(update.get("old_record").get("n").asInt()).isEqualTo(1);
        JsonNode truncate = got.get(2).data();
        assertThat(truncate.get("table").asText()).isEqualTo("toasty");
        assertThat(truncate.has("record")).isFalse();
    }

    @Test
    void aTableWithoutPrimaryKeyOrReplicaIdentityIsWarnedAbout() throws Exception {
        fx.sql("CREATE TABLE " + fx.table("nopk") + "(v text)");
        enableAndSubscribe("nopk");
        Awaitility.await()
                .atMost(Duration.ofSeconds(5))
                .until(() -> logs.lines(Level.WARN, "has neither a primary key nor a replica identity").stream()
                        .anyMatch(l -> l.contains(fx.schema + ".nopk")));
        fx.sql("INSERT INTO " + fx.table("nopk") + " VALUES ('a')", "UPDATE " + fx.table("nopk") + " SET v = 'b'");
        fx.await(r -> r.size() == 1, Duration.ofSeconds(10));
        fx.awaitSettled();
        assertThat(fx.received).extracting(e -> e.data().get("type").asText()).containsExactly("INSERT");
    }
}
