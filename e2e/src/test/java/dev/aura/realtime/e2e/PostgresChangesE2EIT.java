package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The walking skeleton, end to end: SQL on Postgres → wal2json slot → cdc-worker jar → NATS →
 * ws-front jar → the unmodified realtime-js client from npm, on protocol 1.0.0 and 2.0.0.
 */
class PostgresChangesE2EIT {
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = E2eStack.startDefault(1);
        stack.createEnabledTable("messages", "(id bigserial PRIMARY KEY, body text NOT NULL, tags text[], meta jsonb)");
        stack.sql("CREATE TABLE " + stack.table("unwatched") + "(id int PRIMARY KEY, v text)");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static boolean change(JsonNode e, String type) {
        return "postgres_changes".equals(e.path("type").asText())
                && type.equals(e.path("payload").path("eventType").asText());
    }

    /** Supabase semantics: changes flow once the server said "Subscribed to PostgreSQL". */
    static void awaitSubscribedToPostgres(RealtimeJsClient js) {
        JsonNode sys = js.awaitEvent(
                e -> "system".equals(e.path("type").asText())
                        && e.path("payload").path("message").asText().contains("PostgreSQL"),
                Duration.ofSeconds(10));
        assertThat(sys.path("payload").path("status").asText()).isEqualTo("ok");
    }

    @ParameterizedTest(name = "vsn {0}")
    @ValueSource(strings = {"1.0.0", "2.0.0"})
    void realtimeJsReceivesInsertUpdateDeleteOfAnEnabledTable(String vsn) throws Exception {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId), vsn, Map.of());
            js.channel("db-" + vsn);
            js.onPostgresChanges("db-" + vsn, Map.of("event", "*", "schema", "public", "table", "messages"));
            js.onSystem("db-" + vsn);
            js.subscribeAndAwait("db-" + vsn, Duration.ofSeconds(15));
            awaitSubscribedToPostgres(js);

            String body = "hello " + vsn;
            stack.sql("INSERT INTO " + stack.table("messages") + "(body, tags, meta) VALUES ('" + body
                    + "', '{a,b}', '{\"k\": 1}')");
            JsonNode insert = js.awaitEvent(e -> change(e, "INSERT"), Duration.ofSeconds(10))
                    .get("payload");
            assertThat(insert.get("schema").asText()).isEqualTo("public");
            assertThat(insert.get("table").asText()).isEqualTo("messages");
            assertThat(insert.get("new").get("body").asText()).isEqualTo(body);
            assertThat(insert.get("new").get("tags")).hasSize(2);
            assertThat(insert.get("new").get("meta").get("k").asInt()).isEqualTo(1);
            assertThat(insert.get("old")).isEmpty();
            assertThat(insert.get("commit_timestamp").asText()).endsWith("Z");
            long id = insert.get("new").get("id").asLong();

            stack.sql("UPDATE " + stack.table("messages") + " SET body = 'edited' WHERE id = " + id);
            JsonNode update = js.awaitEvent(e -> change(e, "UPDATE"), Duration.ofSeconds(10))
                    .get("payload");
            assertThat(update.get("new").get("body").asText()).isEqualTo("edited");
            assertThat(update.get("old").get("body").asText()).isEqualTo(body);

            stack.sql("DELETE FROM " + stack.table("messages") + " WHERE id = " + id);
            JsonNode delete = js.awaitEvent(e -> change(e, "DELETE"), Duration.ofSeconds(10))
                    .get("payload");
            assertThat(delete.get("old").get("id").asLong()).isEqualTo(id);
            assertThat(delete.get("new")).isEmpty();
        }
    }

    @ParameterizedTest(name = "vsn {0}")
    @ValueSource(strings = {"1.0.0", "2.0.0"})
    void aTableThatIsNotEnabledIsRefusedAtJoinAndItsChangesNeverArrive(String vsn) throws Exception {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId), vsn, Map.of());
            js.channel("off");
            js.onPostgresChanges("off", Map.of("event", "*", "schema", "public", "table", "unwatched"));
            js.subscribe("off");
            JsonNode status = js.awaitStatus("off", "CHANNEL_ERROR", Duration.ofSeconds(15));
            assertThat(status.at("/error/message").asText())
                    .startsWith("RealtimeDisabledForConfiguration: Unable to subscribe to changes")
                    .contains("(table unwatched is not enabled for realtime; enable it with PUT /v1/db/"
                            + stack.projectId + "/schema/tables/unwatched/realtime");
            js.channel("ghost");
            js.onPostgresChanges("ghost", Map.of("event", "*", "schema", "public", "table", "no_such_table"));
            js.subscribe("ghost");
            assertThat(js.awaitStatus("ghost", "CHANNEL_ERROR", Duration.ofSeconds(15))
                            .at("/error/message")
                            .asText())
                    .contains("(there is no table no_such_table in this project; create it, then enable it with PUT");

            js.channel("all");
            js.onPostgresChanges("all", Map.of("event", "*", "schema", "public", "table", "*"));
            js.onSystem("all");
            js.subscribeAndAwait("all", Duration.ofSeconds(15));
            awaitSubscribedToPostgres(js);
            int mark = js.eventCount();
            stack.sql(
                    "INSERT INTO " + stack.table("unwatched") + " VALUES (" + (vsn.startsWith("1") ? 1 : 2) + ", 'x')",
                    "INSERT INTO " + stack.table("messages") + "(body) VALUES ('marker " + vsn + "')");
            JsonNode marker = js.awaitEvent(mark, e -> change(e, "INSERT"), Duration.ofSeconds(10))
                    .get("payload");
            assertThat(marker.get("table").asText()).isEqualTo("messages");
            js.assertNoEvent(
                    mark,
                    e -> "postgres_changes".equals(e.path("type").asText())
                            && "unwatched"
                                    .equals(e.path("payload").path("table").asText()),
                    Duration.ofSeconds(1));
        }
    }

    @ParameterizedTest(name = "vsn {0}")
    @ValueSource(strings = {"1.0.0", "2.0.0"})
    void anInvalidOrExpiredTokenGetsTheProtocolsErrorReply(String vsn) throws Exception {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(
                    stack.wsUrl(0),
                    stack.tokens.anon(stack.projectId),
                    vsn,
                    Map.of("accessToken", stack.tokens.expired("anon", stack.projectId)));
            js.channel("expired");
            js.onPostgresChanges("expired", Map.of("event", "*", "schema", "public", "table", "messages"));
            js.subscribe("expired");
            JsonNode status = js.awaitStatus("expired", "CHANNEL_ERROR", Duration.ofSeconds(15));
            assertThat(status.toString()).contains("InvalidJWTToken").contains("expired");
        }
    }

    /** The "invalid" half: a token signed with another secret, and one without {@code exp}. */
    @ParameterizedTest(name = "vsn {0}")
    @ValueSource(strings = {"1.0.0", "2.0.0"})
    void anInvalidTokenGetsTheProtocolsErrorReply(String vsn) throws Exception {
        Map<String, String> reasons = Map.of(
                stack.tokens.signedWithWrongSecret(stack.projectId), "JwtSignatureError",
                stack.tokens.withoutExp(stack.projectId), "InvalidJWTToken");
        for (Map.Entry<String, String> token : reasons.entrySet()) {
            try (RealtimeJsClient js = RealtimeJsClient.start()) {
                js.connect(
                        stack.wsUrl(0), stack.tokens.anon(stack.projectId), vsn, Map.of("accessToken", token.getKey()));
                js.channel("invalid");
                js.onPostgresChanges("invalid", Map.of("event", "*", "schema", "public", "table", "messages"));
                js.subscribe("invalid");
                JsonNode status = js.awaitStatus("invalid", "CHANNEL_ERROR", Duration.ofSeconds(15));
                assertThat(status.toString()).contains(token.getValue());
            }
        }
    }
}
