package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.ControlApiClient;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.TestTokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The control API (docs/design.md C9) and the join-time subscription check. */
class ControlApiIT {
    private static CdcFixture fx;
    private static final HttpClient http = HttpClient.newHttpClient();
    private static final ObjectMapper json = WireJson.mapper();
    private static TestTokens tokens;
    private static ControlApiClient api;

    @BeforeAll
    static void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of());
        api = new ControlApiClient(fx.worker().httpPort());
        fx.createProject();
        tokens = TestTokens.of(CdcFixture.SECRET);
        String s = "\"" + fx.schema + "\"";
        fx.sql(
                "CREATE TABLE " + s + ".todos(id int PRIMARY KEY, done bool, title text, due timestamptz)",
                "CREATE TABLE " + s + ".\"My Table\"(id int PRIMARY KEY)",
                "CREATE TABLE " + s + ".nokey(v text)");
    }

    @AfterAll
    static void tearDown() throws Exception {
        fx.close();
    }

    private HttpResponse<String> put(String table, String body, String token) {
        return api.putRealtime(fx.projectId, table, body, token);
    }

    /** {@code GET /v1/db/{project}/realtime/tables} with the given authentication header. */
    private HttpResponse<String> listTables(String header, String value) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
                                + fx.worker().httpPort() + "/v1/db/" + fx.projectId + "/realtime/tables"))
                        .header(header, value)
                        .build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void enablingNeedsAServiceRoleKeyOfTheProjectAnExistingTableAndAPrimaryKey() throws Exception {
        String service = tokens.serviceRole(fx.projectId);
        assertThat(put("todos", "{\"enabled\":true}", null).statusCode()).isEqualTo(401);
        assertThat(put("todos", "{\"enabled\":true}", tokens.anon(fx.projectId)).statusCode())
                .isEqualTo(401);
        assertThat(put(
                                "todos",
                                "{\"enabled\":true}",
                                tokens.serviceRole(UUID.randomUUID().toString()))
                        .statusCode())
                .isEqualTo(401);
        assertThat(put("todos", "{\"enabled\":true}", tokens.signedWithWrongSecret(fx.projectId))
                        .statusCode())
                .isEqualTo(401);
        assertThat(put("missing", "{\"enabled\":true}", service).statusCode()).isEqualTo(404);
        HttpResponse<String> noKey = put("nokey", "{\"enabled\":true}", service);
        assertThat(noKey.statusCode()).isEqualTo(422);
        assertThat(noKey.body()).contains("primary key");
        assertThat(put("todos", "not json", service).statusCode()).isEqualTo(400);

        HttpResponse<String> ok = put("todos", "{\"enabled\":true}", service);
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(put("todos", "{\"enabled\":true}", service).statusCode()).isEqualTo(200); // idempotent
        assertThat(put("My Table", "{\"enabled\":true}", service).statusCode()).isEqualTo(200);
        try (var c = fx.pg.connect();
                var st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT relreplident FROM pg_class WHERE oid = '\"" + fx.schema + "\".todos'::regclass")) {
            rs.next();
            assertThat(rs.getString(1)).isEqualTo("f"); // REPLICA IDENTITY FULL
        }

        HttpResponse<String> list = listTables("Authorization", "Bearer " + service);
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(json.readTree(list.body()).get("tables").findValuesAsText("table"))
                .containsExactly("My Table", "todos");

        assertThat(put("My Table", "{\"enabled\":false}", service).statusCode()).isEqualTo(200);
        list = listTables("apikey", service);
        assertThat(json.readTree(list.body()).get("tables").findValuesAsText("table"))
                .containsExactly("todos");
    }

    private SubscriptionCheck.Reply check(String project, String table, String filter) throws Exception {
        var msg = fx.nats.request(
                Subjects.SUBSCRIPTION_CHECK,
                json.writeValueAsBytes(new SubscriptionCheck.Request(project, table, filter)),
                Duration.ofSeconds(5));
        return json.readValue(msg.getData(), SubscriptionCheck.Reply.class);
    }

    @Test
    void joinTimeCheckRefusesDisabledTablesBadColumnsAndUncastableValues() throws Exception {
        fx.enable("todos");
        assertThat(check(fx.projectId, "todos", null).ok()).isTrue();
        assertThat(check(fx.projectId, "*", null).ok()).isTrue();
        SubscriptionCheck.Reply eq = check(fx.projectId, "todos", "id=eq.5");
        assertThat(eq.ok()).isTrue();
        assertThat(eq.columnType()).isEqualTo("int4");
        assertThat(check(fx.projectId, "todos", "id=in.(1,2,3)").ok()).isTrue();
        assertThat(check(fx.projectId, "todos", "due=gt.2026-01-01T00:00:00Z").ok())
                .isTrue();

        assertThat(check(fx.projectId, "nokey", null).error()).startsWith("RealtimeDisabledForConfiguration:");
        assertThat(check(fx.projectId, fx.schema + ".todos", null).error())
                .startsWith("RealtimeDisabledForConfiguration:");
        assertThat(check(UUID.randomUUID().toString(), "todos", null).ok()).isFalse();
        assertThat(check(fx.projectId, "todos", "nope=eq.1").error()).contains("invalid column for filter nope");
        assertThat(check(fx.projectId, "todos", "id=eq.abc").error()).contains("invalid value for filter id");
        assertThat(check(fx.projectId, "todos", "done=eq.maybe").error()).contains("invalid value");
        assertThat(check(fx.projectId, "todos", "id=like.1").error()).contains("unknown operator");
        assertThat(check(fx.projectId, "todos", "id=eq.1; drop table x").ok()).isFalse();
    }
}
