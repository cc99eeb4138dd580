package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import dev.aura.realtime.cdc.catalog.PlatformDb;
import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.control.ControlApi;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.ControlApiClient;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.TestTokens;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;

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
        // an operator default window of 120 s (shipped as 0), so the default's answer is seen
        fx.startWorker(Map.of("AURA_RESUME_DEFAULT_SECONDS", "120"));
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

    @Test
    void enablingWaitsForTheTablesLockOnlyBrieflySkipsTablesAlreadyFullAndRefusesLongNames() throws Exception {
        String service = tokens.serviceRole(fx.projectId);
        String s = "\"" + fx.schema + "\"";
        fx.sql(
                "CREATE TABLE " + s + ".busy(id int PRIMARY KEY)",
                "CREATE TABLE " + s + ".ready(id int PRIMARY KEY)",
                "ALTER TABLE " + s + ".ready REPLICA IDENTITY FULL");
        try (Connection tenant = fx.pg.connect()) {
            // a tenant's open transaction holds both tables
            tenant.setAutoCommit(false);
            try (Statement st = tenant.createStatement()) {
                st.execute("LOCK TABLE " + s + ".busy, " + s + ".ready IN ACCESS SHARE MODE");
            }
            long started = System.nanoTime();
            HttpResponse<String> busy = put("busy", "{\"enabled\":true}", service);
            assertThat(busy.statusCode()).as(busy.body()).isEqualTo(409);
            assertThat(busy.body()).contains("locked by another transaction");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(20));
            // already REPLICA IDENTITY FULL: nothing to alter, so nothing to wait for
            HttpResponse<String> ready = put("ready", "{\"enabled\":true}", service);
            assertThat(ready.statusCode()).as(ready.body()).isEqualTo(200);
            tenant.rollback();
        }
        HttpResponse<String> longName = put("x".repeat(64), "{\"enabled\":true}", service);
        assertThat(longName.statusCode()).isEqualTo(422);
        assertThat(longName.body()).contains("longer than 63 bytes");
        assertThat(put("é".repeat(32), "{\"enabled\":true}", service).statusCode())
                .isEqualTo(422); // 64 bytes in UTF-8
    }

    @Test
    void aLoginThatMayNotAlterTheTableIsAnsweredForbiddenWithPostgresReason() throws Exception {
        String s = "\"" + fx.schema + "\"";
        String login = "ctl_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        fx.sql(
                "CREATE TABLE " + s + ".theirs(id int PRIMARY KEY)",
                "CREATE ROLE " + login + " LOGIN",
                "GRANT USAGE ON SCHEMA aura_platform, " + s + " TO " + login,
                "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA aura_platform TO " + login);
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(fx.pg.jdbcUrl(login, "unused"));
        ControlApi api = new ControlApi(
                new ProjectCatalog(new PlatformDb(ds)),
                new JwtVerifier(CdcFixture.SECRET, Clock.systemUTC()),
                () -> {},
                Duration.ofSeconds(3),
                () -> null);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/", api);
        server.start();
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create(
                                    "http://127.0.0.1:" + server.getAddress().getPort() + "/v1/db/" + fx.projectId
                                            + "/schema/tables/theirs/realtime"))
                            .PUT(HttpRequest.BodyPublishers.ofString("{\"enabled\":true}"))
                            .header("apikey", tokens.serviceRole(fx.projectId))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(403);
            assertThat(r.body()).contains("must be owner of table theirs");
        } finally {
            server.stop(0);
        }
    }

    private SubscriptionCheck.Reply check(String project, String table, String filter) throws Exception {
        return check(new SubscriptionCheck.Request(project, table, filter));
    }

    private SubscriptionCheck.Reply check(SubscriptionCheck.Request request) throws Exception {
        var msg = fx.nats.request(Subjects.SUBSCRIPTION_CHECK, json.writeValueAsBytes(request), Duration.ofSeconds(5));
        return json.readValue(msg.getData(), SubscriptionCheck.Reply.class);
    }

    private ProjectLimits limitsOf(String project) throws Exception {
        var msg = fx.nats.request(
                Subjects.PROJECT_LIMITS,
                json.writeValueAsBytes(new ProjectLimits.Request(project)),
                Duration.ofSeconds(5));
        return json.readValue(msg.getData(), ProjectLimits.class);
    }

    /** The resume window answered is the one in force: the row's, else the operator default (120 s; issue 38). */
    @Test
    void projectLimitsAreAnsweredFromTheProjectsRowAndDefaultWithoutOne() throws Exception {
        ProjectLimits defaults = ProjectLimits.DEFAULTS.withResumeSeconds(120);
        assertThat(limitsOf(fx.projectId)).isEqualTo(defaults);
        assertThat(limitsOf("not-a-uuid")).isEqualTo(defaults);
        fx.sql("INSERT INTO aura_platform.project_limits(project_id, max_concurrent_users, max_payload_size_in_kb,"
                + " max_checks_per_second, max_presence_bytes) VALUES ('" + fx.projectId + "', 3, 64, 50, 5000000000)");
        try {
            assertThat(limitsOf(fx.projectId))
                    .isEqualTo(new ProjectLimits(
                            3, null, null, null, null, 64, null, 50, null, 5_000_000_000L, 120, 67_108_864L, null));
            fx.sql("UPDATE aura_platform.project_limits SET postgres_changes_resume_seconds = 0,"
                    + " max_resume_bytes = 4096 WHERE project_id = '" + fx.projectId + "'");
            assertThat(limitsOf(fx.projectId))
                    .as("0 turns resume off")
                    .isEqualTo(new ProjectLimits(
                            3, null, null, null, null, 64, null, 50, null, 5_000_000_000L, 0, 67_108_864L, 4096L));
        } finally {
            fx.sql("DELETE FROM aura_platform.project_limits WHERE project_id = '" + fx.projectId + "'");
        }
    }

    @Test
    void joinTimeCheckKeepsFiltersFromRevealingWhatTheRoleMayNotRead() throws Exception {
        String t = "\"" + fx.schema + "\".guarded";
        fx.sql(
                "CREATE TABLE " + t + "(id int PRIMARY KEY, owner text, secret int)",
                "GRANT SELECT (id, owner) ON " + t + " TO aura_anon",
                "GRANT SELECT ON " + t + " TO aura_authenticated",
                "ALTER TABLE " + t + " ENABLE ROW LEVEL SECURITY");
        fx.enable("guarded");
        try {
            String p = fx.projectId;
            assertThat(check(new SubscriptionCheck.Request(p, "guarded", "secret=eq.1", "INSERT", "anon"))
                            .error())
                    .startsWith("PostgresChangesInvalidFilter: invalid column for filter secret")
                    .endsWith("role anon may not select it; missing grant: grant select (secret) on " + fx.schema
                            + ".guarded to " + fx.schema + "_anon");
            assertThat(check(new SubscriptionCheck.Request(p, "guarded", "owner=eq.x", "DELETE", "anon"))
                            .error())
                    .startsWith("PostgresChangesInvalidFilter: invalid column for DELETE filter owner")
                    .contains("primary key (id)");
            // a request without a role (an older ws-front) still may not filter a DELETE by a non-key column
            assertThat(check(new SubscriptionCheck.Request(p, "guarded", "owner=eq.x", "DELETE", null))
                            .ok())
                    .isFalse();
            assertThat(check(new SubscriptionCheck.Request(p, "guarded", "id=eq.1", "DELETE", "anon"))
                            .ok())
                    .isTrue();
            SubscriptionCheck.Reply star =
                    check(new SubscriptionCheck.Request(p, "guarded", "owner=eq.x", "*", "authenticated"));
            assertThat(star.ok()).isTrue();
            assertThat(star.notice()).startsWith("PostgresChangesDeleteNotDelivered:");
            assertThat(check(new SubscriptionCheck.Request(p, "guarded", "secret=eq.1", "DELETE", "service_role"))
                            .ok())
                    .isTrue();
            assertThat(check(new SubscriptionCheck.Request(p, "guarded", null, "*", "hacker"))
                            .error())
                    .startsWith("Unauthorized: role 'hacker'");
        } finally {
            fx.disable("guarded"); // the listing test expects its own tables only
        }
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

        assertThat(check(fx.projectId, "nokey", null).error())
                .startsWith("RealtimeDisabledForConfiguration:")
                .contains("(table nokey is not enabled for realtime; enable it with PUT /v1/db/" + fx.projectId
                        + "/schema/tables/nokey/realtime");
        assertThat(check(fx.projectId, "ghost", null).error())
                .startsWith("RealtimeDisabledForConfiguration:")
                .contains("(there is no table ghost in this project; create it, then enable it with PUT");
        assertThat(check(fx.projectId, fx.schema + ".todos", null).error())
                .startsWith("RealtimeDisabledForConfiguration:");
        assertThat(check(UUID.randomUUID().toString(), "todos", null).ok()).isFalse();
        assertThat(check(fx.projectId, "todos", "nope=eq.1").error())
                .contains("invalid column for filter nope: todos has no column nope; ")
                .containsPattern("(its columns|the columns role \\w+ may select): id, ");
        assertThat(check(fx.projectId, "todos", "id=eq.abc").error()).contains("invalid value for filter id");
        assertThat(check(fx.projectId, "todos", "done=eq.maybe").error()).contains("invalid value");
        assertThat(check(fx.projectId, "todos", "id=foo.1").error()).contains("unknown operator foo");
        assertThat(check(fx.projectId, "todos", "id=like.1").error()).contains("like needs a text column, not int4");
        assertThat(check(fx.projectId, "todos", "id=is.true").error()).contains("needs a boolean column");
        assertThat(check(fx.projectId, "todos", "id=not.is.null,done=is.false,id=not.in.(1,2)")
                        .ok())
                .isTrue();
        assertThat(check(fx.projectId, "todos", "id=gt.1,nope=eq.1").error())
                .contains("invalid column for filter nope");
        assertThat(check(fx.projectId, "todos", "id=gt.1,id=lt.abc").error()).contains("invalid value for filter id");
        assertThat(check(fx.projectId, "todos", "id=isdistinct.null").ok()).isTrue();
        assertThat(check(fx.projectId, "todos", "title=like.%25\\%%,title=imatch.\"^(a|b)\"")
                        .ok())
                .isTrue();
        assertThat(check(fx.projectId, "todos", "title=match.\"(a\"").error()).contains("invalid regular expression");
        assertThat(check(fx.projectId, "todos", "title=match.\"(a{1000}){1000}\"")
                        .error())
                .contains("too complex");
        assertThat(check(fx.projectId, "todos", "id=eq.1; drop table x").ok()).isFalse();
    }
}
