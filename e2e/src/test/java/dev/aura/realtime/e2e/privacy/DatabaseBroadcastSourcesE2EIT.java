package dev.aura.realtime.e2e.privacy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Broadcast from Database end to end with each way of reading the slot (docs/design.md H2, C12):
 * the cdc-worker jar with {@code CDC_SOURCE=stream} (the default) and {@code poll}, one ws-front,
 * and the real realtime-js on a private channel: a trigger calling {@code broadcast_changes} and a
 * {@code send} in the same transaction arrive in commit order with {@code meta.id}.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@ValueSource(strings = {"stream", "poll"})
class DatabaseBroadcastSourcesE2EIT {
    private static final Duration T = Duration.ofSeconds(20);

    @Parameter
    String source;

    private E2eStack stack;
    private String rt;

    @BeforeEach
    void start() {
        stack = E2eStack.start(PostgresServer.shared(), NatsServer.shared(), 1, Map.of("CDC_SOURCE", source));
        rt = "\"" + stack.schema.replace("\"", "") + "_realtime\"";
        Awaitility.await()
                .alias("realtime schema provisioned")
                .atMost(T)
                .until(() -> stack.pg
                        .queryOne("SELECT count(*) FROM aura_platform.projects WHERE project_id = '" + stack.projectId
                                + "' AND realtime_schema_version >= 1")
                        .equals("1"));
        stack.sql(
                "CREATE POLICY signed_in_reads ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                        + ".topic() LIKE 'db:%')",
                "CREATE TABLE " + stack.table("items") + "(id int PRIMARY KEY, name text)",
                "CREATE FUNCTION " + stack.schema + ".items_broadcast() RETURNS trigger LANGUAGE plpgsql AS $$"
                        + " BEGIN PERFORM " + rt + ".broadcast_changes('db:items', TG_OP, TG_OP, TG_TABLE_NAME,"
                        + " TG_TABLE_SCHEMA, NEW, OLD); RETURN NULL; END $$",
                "CREATE TRIGGER items_broadcast AFTER INSERT ON " + stack.table("items")
                        + " FOR EACH ROW EXECUTE FUNCTION " + stack.schema + ".items_broadcast()");
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    @Test
    void aTriggersBroadcastAndASendReachThePrivateChannelInCommitOrder() {
        Map<String, Object> claims = stack.tokens.claims("authenticated", stack.projectId);
        claims.put("sub", UUID.randomUUID().toString());
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(
                    stack.wsUrl(0),
                    stack.tokens.anon(stack.projectId),
                    "2.0.0",
                    Map.of("accessToken", stack.tokens.withClaims(claims)));
            js.channel("db:items", Map.of("private", true));
            js.onBroadcast("db:items", "*");
            js.subscribeAndAwait("db:items", T);

            stack.sql(
                    "BEGIN",
                    "INSERT INTO " + stack.table("items") + " VALUES (1, 'tea ☕')",
                    "SELECT " + rt + ".send('{\"note\": \"after \\\"tea\\\"\"}', 'note', 'db:items')",
                    "COMMIT");

            List<JsonNode> got = Awaitility.await()
                    .atMost(T)
                    .pollInterval(Duration.ofMillis(20))
                    .until(
                            () -> js.events().stream()
                                    .filter(e ->
                                            "broadcast".equals(e.path("type").asText()))
                                    .toList(),
                            l -> l.size() >= 2);
            JsonNode insert = got.get(0).path("payload");
            assertThat(insert.path("event").asText()).isEqualTo("INSERT");
            assertThat(insert.path("payload").path("record").path("name").asText())
                    .isEqualTo("tea ☕");
            assertThat(insert.path("meta").path("id").asText()).hasSize(36);
            JsonNode note = got.get(1).path("payload");
            assertThat(note.path("event").asText()).isEqualTo("note");
            assertThat(note.path("payload").path("note").asText()).isEqualTo("after \"tea\"");
        }
    }
}
