package dev.aura.realtime.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 36's five shapes, end to end with the real realtime-js: one row, one call or one slow
 * policy of project A must never stop realtime for project B (docs/design.md C13, C14). The
 * worker runs one shard, so A and B always share it: the strongest case.
 *
 * <p>After each attack: B's row committed after it arrives within 2 s, {@code cdc_active} stayed
 * true, the slot's {@code confirmed_flush_lsn} moved past the attack's commit, A's subscribers see
 * either the row itself (a value Postgres accepts is delivered, at every size it accepts) or an
 * error event, the quarantine keeps what could not be delivered, and neither {@code /health} nor
 * B's clients ever see A's data or an exception text quoting it.
 */
class PoisonRowsE2EIT {
    private static final Duration T = Duration.ofSeconds(20);
    /** How late B's row may be while A misbehaves (issue 36). */
    private static final Duration VICTIM_BOUND = Duration.ofSeconds(2);

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    private static E2eStack stack;
    private static String a;
    private static String b;
    private static RealtimeJsClient aChanges;
    private static RealtimeJsClient aRoom;
    private static RealtimeJsClient bClient;
    private static int bRows;

    @BeforeAll
    static void start() {
        stack = E2eStack.start(PostgresServer.shared(), NatsServer.shared(), 1, Map.of("CDC_NUM_SHARDS", "1"));
        a = stack.projectId;
        b = UUID.randomUUID().toString();
        stack.createProject(b);
        stack.awaitRealtimeSchema(T);
        String as = stack.table("hostile");
        stack.sql(
                "CREATE TABLE " + as + " (id int PRIMARY KEY, f text, n numeric, j jsonb)",
                "GRANT SELECT ON " + as + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + as + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY everyone ON " + as + " FOR SELECT USING (true)",
                "CREATE TABLE " + stack.table("slow") + " (id int PRIMARY KEY)",
                "GRANT SELECT ON " + stack.table("slow") + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + stack.table("slow") + " ENABLE ROW LEVEL SECURITY",
                // a membership subquery that is this slow on a busy database: 50 ms a row
                "CREATE POLICY slow ON " + stack.table("slow")
                        + " FOR SELECT USING ((SELECT true FROM pg_sleep(0.05)))",
                // Supabase's usual broadcast authorization: signed-in users read and write a-room:*
                "CREATE POLICY a_read ON " + stack.realtimeSchema() + ".messages FOR SELECT TO aura_authenticated"
                        + " USING (" + stack.realtimeSchema() + ".topic() LIKE 'a-room:%')",
                "CREATE POLICY a_write ON " + stack.realtimeSchema() + ".messages FOR INSERT TO aura_authenticated"
                        + " WITH CHECK (" + stack.realtimeSchema() + ".topic() LIKE 'a-room:%')");
        stack.enable("hostile");
        stack.enable("slow");
        stack.createEnabledTable(b, "feed", "(id int PRIMARY KEY, body text)");

        aChanges = client(a, Map.of());
        aChanges.channel("a-changes");
        aChanges.onPostgresChanges(
                "a-changes", Map.of("event", "*", "schema", "public", "table", "hostile", "filter", "f=eq.x"));
        aChanges.onPostgresChanges("a-changes", Map.of("event", "*", "schema", "public", "table", "slow"));
        aChanges.onSystem("a-changes");
        aChanges.subscribeAndAwait("a-changes", T);

        aRoom = client(
                a,
                Map.of(
                        "accessToken",
                        stack.tokens.authenticated(a, UUID.randomUUID().toString())));
        aRoom.channel("a-room:1", Map.of("private", true));
        aRoom.onBroadcast("a-room:1", "*");
        aRoom.subscribeAndAwait("a-room:1", T);

        bClient = client(b, Map.of());
        bClient.channel("b-feed");
        bClient.onPostgresChanges("b-feed", Map.of("event", "*", "schema", "public", "table", "feed"));
        bClient.onSystem("b-feed");
        bClient.subscribeAndAwait("b-feed", T);
        victimDeliversWithin(T); // warmed up: B works before any attack
    }

    @AfterAll
    static void stop() {
        for (RealtimeJsClient js : new RealtimeJsClient[] {aChanges, aRoom, bClient}) {
            if (js != null) {
                js.close();
            }
        }
        if (stack != null) {
            stack.close();
        }
    }

    private static RealtimeJsClient client(String project, Map<String, ?> options) {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(stack.wsUrl(0), stack.tokens.anon(project), "2.0.0", options);
        return js;
    }

    // ---- the shapes ------------------------------------------------------------------------------

    /** Shape 1: one REST call of an end user with a 1,001-digit number in a persisted broadcast. */
    @Test
    void anEndUsersPersistedBroadcastWithAHugeNumberIsDeliveredAndStopsNothing() throws Exception {
        int mark = aRoom.eventCount();
        HttpResponse<String> sent = post(
                "/api/broadcast/a-room:1/events/huge?private=true&persist=true",
                stack.tokens.authenticated(a, UUID.randomUUID().toString()),
                "{\"n\":1E+1000}");
        assertThat(sent.statusCode()).as(sent.body()).isEqualTo(202);
        String lsn = currentLsn();
        aRoom.awaitEvent(mark, e -> broadcast(e, "a-room:1", "huge"), T);
        afterAttack(lsn);
    }

    /** The edge refuses, with the protocol's error, a payload nested deeper than the pipeline carries. */
    @Test
    void theEdgeRefusesAPayloadNestedPastThePipelinesBound() throws Exception {
        String deep = "{\"v\":" + "[".repeat(5_000) + "1" + "]".repeat(5_000) + "}";
        HttpResponse<String> rest = post(
                "/api/broadcast/a-room:1/events/deep-rest?private=true",
                stack.tokens.authenticated(a, UUID.randomUUID().toString()),
                deep);
        assertThat(rest.statusCode()).isEqualTo(413);
        assertThat(rest.body()).contains("PayloadTooLarge: Payload is nested deeper than 4096 levels");
        victimDeliversWithin(VICTIM_BOUND);
    }

    /** Shape 2a: an ordinary INSERT of a 1,001-digit numeric under RLS with a filtered subscriber. */
    @Test
    void aNumericOfThousandsOfDigitsUnderRlsWithAFilterIsDeliveredAndStopsNothing() {
        int mark = aChanges.eventCount();
        stack.sql("INSERT INTO " + stack.table("hostile") + " VALUES (1, 'x', 1" + "0".repeat(1000) + ", null)");
        String lsn = currentLsn();
        aChanges.awaitEvent(mark, e -> change(e, "hostile", 1), T);
        // and at Postgres's own limit: 131,072 digits before the point, 16,383 after
        stack.sql("INSERT INTO " + stack.table("hostile") + " VALUES (2, 'x', " + "9".repeat(131_072) + "."
                + "9".repeat(16_383) + ", null)");
        aChanges.awaitEvent(mark, e -> change(e, "hostile", 2), T);
        afterAttack(lsn);
    }

    /** Shape 2b: {@code realtime.send()} of a jsonb holding a 1,001-digit number. */
    @Test
    void aSentPayloadWithAThousandDigitNumberIsDeliveredAndStopsNothing() {
        int mark = aRoom.eventCount();
        send("jsonb_build_object('n', ('1' || repeat('0', 1000))::numeric)", "digits", "a-room:1");
        String lsn = currentLsn();
        aRoom.awaitEvent(mark, e -> broadcast(e, "a-room:1", "digits"), T);
        afterAttack(lsn);
    }

    /** Shape 2c: {@code realtime.send()} of a payload nested 1,100 levels deep: delivered whole. */
    @Test
    void aSentPayloadNestedPastJacksonsDefaultIsDeliveredAndStopsNothing() {
        int mark = aRoom.eventCount();
        send(nested(1_100), "deep", "a-room:1");
        String lsn = currentLsn();
        JsonNode got = aRoom.awaitEvent(mark, e -> broadcast(e, "a-room:1", "deep"), T);
        assertThat(depth(got.path("payload").path("payload"))).isEqualTo(1_101);
        afterAttack(lsn);
    }

    /**
     * Past what the pipeline carries (docs/design.md C13: 4,096 levels): A's subscribers get the
     * message as {@code Error 413: Payload Too Large}, the quarantine keeps the row.
     */
    @Test
    void aSentPayloadNestedPastThePipelinesBoundBecomesAnErrorForItsOwnSubscribersAndIsQuarantined() throws Exception {
        int mark = aRoom.eventCount();
        send(nested(5_000), "deeper", "a-room:1");
        String lsn = currentLsn();
        JsonNode got = aRoom.awaitEvent(mark, e -> broadcast(e, "a-room:1", "deeper"), T);
        assertThat(got.path("payload").path("payload").path("error").asText())
                .isEqualTo("Error 413: Payload Too Large");
        afterAttack(lsn);
        awaitQuarantined(e -> e.path("fault").asText().equals("too_large")
                && e.path("table").asText().equals("messages"));
    }

    /** Shape 2d: {@code realtime.send()} to a topic of 1,400 characters (a subject jnats refuses). */
    @Test
    void aSentTopicTooLongForANatsSubjectIsQuarantinedAndStopsNothing() throws Exception {
        String topic = "t" + "\u00e9".repeat(1_399);
        send("'{}'::jsonb", "long-topic", topic);
        String lsn = currentLsn();
        afterAttack(lsn);
        JsonNode entry = awaitQuarantined(e -> e.path("fault").asText().equals("too_large")
                && e.path("detail").asText().contains("topic"));
        JsonNode raw = quarantineEntry(entry.path("seq").asLong());
        assertThat(raw.path("raw").asText()).contains("long-topic").contains("t\u00e9\u00e9\u00e9");
    }

    /**
     * Shape 5: B's policy... here A's: 50 ms a row, 20 rows at once beside B's 20. A is late, not
     * lost: all 20 arrive; B's 20 arrive within the victim bound meanwhile.
     */
    @Test
    void aSlowProjectsRowsArriveLateAndAllWhileOthersStayOnTime() {
        int mark = aChanges.eventCount();
        int bMark = bClient.eventCount();
        stack.sql("INSERT INTO " + stack.table("slow") + " SELECT g FROM generate_series(1, 20) g");
        long started = System.nanoTime();
        int first = bRows + 1;
        bRows += 20;
        stack.sql("INSERT INTO " + stack.table(b, "feed") + " SELECT g, 'victim' FROM generate_series(" + first + ", "
                + bRows + ") g");
        Awaitility.await("B's 20 rows beside the slow project")
                .atMost(VICTIM_BOUND)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> countFrom(bClient, bMark, e -> feedRow(e) >= first) == 20);
        Duration victim = Duration.ofNanos(System.nanoTime() - started);
        Awaitility.await("A's 20 slow rows, late")
                .atMost(Duration.ofSeconds(60))
                .until(() -> countFrom(
                                aChanges,
                                mark,
                                e -> "postgres_changes".equals(e.path("type").asText())
                                        && "slow"
                                                .equals(e.path("payload")
                                                        .path("table")
                                                        .asText()))
                        == 20);
        assertThat(victim).isLessThanOrEqualTo(VICTIM_BOUND);
        assertThat(health().path("cdc_active").asBoolean()).isTrue();
    }

    /**
     * A large row of a project that is late (its slow table's checks made it so) goes through the
     * late lane and arrives whole (HostileValuesE2EIT seed 13207082144507 case 52 lost it under load).
     */
    @Test
    void aLargeRowOfALateProjectArrivesThroughItsLateLane() {
        int mark = aChanges.eventCount();
        stack.sql("INSERT INTO " + stack.table("slow") + " SELECT g FROM generate_series(101, 105) g");
        stack.sql("INSERT INTO " + stack.table("hostile")
                + " (id, f, j) VALUES (52, 'x', (SELECT jsonb_agg(g) FROM generate_series(1, 89523) g))");
        String lsn = currentLsn();
        JsonNode row = aChanges.awaitEvent(mark, e -> change(e, "hostile", 52), Duration.ofSeconds(60));
        assertThat(row.path("payload").path("new").path("j").size()).isEqualTo(89_523);
        afterAttack(lsn);
    }

    /**
     * The slot can decode a commit before the transaction is visible to other sessions: Postgres
     * flushes the commit record, then leaves the proc array. A synchronous standby that never
     * answers holds a committing backend in between for as long as we like (Postgres 15's logical
     * walsender does not wait for it). An RLS check in that window finds no row; the worker must
     * wait for the commit to be visible rather than deny the row silently (design.md C7, "Commit
     * visibility"; HostileValuesE2EIT lost about one row in 400 this way under load).
     */
    @Test
    void aRowDecodedBeforeItsCommitIsVisibleIsCheckedOnceItIs() throws Exception {
        int mark = aChanges.eventCount();
        stack.pg.execute(
                "ALTER SYSTEM SET synchronous_standby_names = 'aura_no_such_standby'", "SELECT pg_reload_conf()");
        ExecutorService writer = Executors.newSingleThreadExecutor();
        Future<?> insert;
        try {
            insert = writer.submit(
                    () -> stack.sql("INSERT INTO " + stack.table("hostile") + " (id, f) VALUES (53, 'x')"));
            Awaitility.await("the INSERT's commit waiting for the standby")
                    .atMost(T)
                    .until(() -> "t"
                            .equals(stack.pg.queryOne(
                                    "SELECT count(*) > 0 FROM pg_stat_activity WHERE wait_event = 'SyncRep'")));
            // the window the race needs: the worker decodes the commit and checks the row meanwhile
            Thread.sleep(1500);
        } finally {
            stack.pg.execute("ALTER SYSTEM RESET synchronous_standby_names", "SELECT pg_reload_conf()");
        }
        insert.get(T.toMillis(), TimeUnit.MILLISECONDS);
        writer.shutdown();
        aChanges.awaitEvent(mark, e -> change(e, "hostile", 53), T);
    }

    /**
     * A change whose check cannot finish even alone in the late lane reaches its subscriber as
     * {@code Error 504} and stays in the quarantine; once the tenant fixed its policy, an operator
     * re-publishes it and the subscriber receives the row itself (docs/operations.md, "Quarantine").
     */
    @Test
    void aChangeQuarantinedForItsSlowPolicyIsDeliveredWhenRepublishedAfterTheFix() throws Exception {
        String t = stack.table("stubborn");
        stack.sql(
                "CREATE TABLE " + t + " (id int PRIMARY KEY, body text)",
                "GRANT SELECT ON " + t + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + t + " ENABLE ROW LEVEL SECURITY",
                "CREATE FUNCTION \"" + stack.schema + "\".slow_for(b text) RETURNS boolean LANGUAGE sql AS"
                        + " $$ SELECT CASE WHEN b = 'slow' THEN (SELECT true FROM pg_sleep(5)) ELSE true END $$",
                "CREATE POLICY p ON " + t + " FOR SELECT USING (\"" + stack.schema + "\".slow_for(body))");
        stack.enable("stubborn");
        aChanges.channel("a-stubborn");
        aChanges.onPostgresChanges("a-stubborn", Map.of("event", "INSERT", "schema", "public", "table", "stubborn"));
        aChanges.subscribeAndAwait("a-stubborn", T);
        int mark = aChanges.eventCount();
        stack.sql("INSERT INTO " + t + " VALUES (1, 'slow'), (2, 'fast')");
        aChanges.awaitEvent(mark, e -> change(e, "stubborn", 2), T);
        JsonNode error = aChanges.awaitEvent(
                mark,
                e -> "postgres_changes".equals(e.path("type").asText())
                        && "stubborn".equals(e.path("payload").path("table").asText())
                        && e.path("payload").path("errors").toString().contains("Error 504: Gateway Timeout"),
                T);
        assertThat(error.path("payload").path("new").size())
                .as("no values in the error event")
                .isZero();
        JsonNode kept = awaitQuarantined(e -> e.path("fault").asText().equals("check_timed_out")
                && e.path("table").asText().equals("stubborn"));

        // the tenant fixes its policy; the operator re-publishes what was kept
        stack.sql("CREATE OR REPLACE FUNCTION \"" + stack.schema + "\".slow_for(b text) RETURNS boolean"
                + " LANGUAGE sql AS $$ SELECT true $$");
        int before = aChanges.eventCount();
        HttpResponse<String> r = HTTP.send(
                HttpRequest.newBuilder(URI.create(
                                "http://127.0.0.1:" + stack.cdcPort + "/v1/db/" + a + "/realtime/quarantine/republish"))
                        .header("apikey", stack.tokens.serviceRole(a))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(
                                "{\"from\": " + kept.path("seq").asLong() + ", \"to\": "
                                        + kept.path("seq").asLong() + ", \"remove\": true}"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(202);
        assertThat(JSON.readTree(r.body()).path("republished").asInt()).isEqualTo(1);
        JsonNode delivered = aChanges.awaitEvent(before, e -> change(e, "stubborn", 1), T);
        assertThat(delivered.path("payload").path("new").path("body").asText()).isEqualTo("slow");
        assertThat(quarantine().path("entries").toString())
                .doesNotContain(kept.path("event_id").asText());
        victimDeliversWithin(VICTIM_BOUND);
    }

    // ---- what holds after every attack -----------------------------------------------------------

    /**
     * B's row committed after the attack arrives within {@link #VICTIM_BOUND}; the slot confirms
     * past the attack's commit; {@code cdc_active} is true; nothing of A reached /health or B.
     */
    private static void afterAttack(String attackLsn) {
        victimDeliversWithin(VICTIM_BOUND);
        Awaitility.await("confirmed_flush_lsn past " + attackLsn)
                .atMost(T)
                .until(() -> "t"
                        .equals(stack.pg.queryOne("SELECT confirmed_flush_lsn >= '" + attackLsn
                                + "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '" + stack.slot + "'")));
        JsonNode health = health();
        assertThat(health.path("cdc_active").asBoolean()).as(health.toString()).isTrue();
        String text = health.toString() + bClient.events();
        assertThat(text)
                .doesNotContain("exceeds the maximum")
                .doesNotContain("Control line")
                .doesNotContain("Constraints")
                .doesNotContain("a-room")
                .doesNotContain("\u00e9\u00e9\u00e9");
    }

    /** Inserts B's next row and waits for B's subscriber to receive it. */
    private static void victimDeliversWithin(Duration bound) {
        int row = ++bRows;
        int mark = bClient.eventCount();
        stack.sql("INSERT INTO " + stack.table(b, "feed") + " VALUES (" + row + ", 'victim')");
        Awaitility.await("B's row " + row)
                .atMost(bound)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> countFrom(bClient, mark, e -> feedRow(e) == row) == 1);
    }

    // ---- helpers ---------------------------------------------------------------------------------

    private static void send(String payloadSql, String event, String topic) {
        stack.sql("SELECT " + stack.realtimeSchema() + ".send(" + payloadSql + ", '" + event + "', '"
                + topic.replace("'", "''") + "', true)");
    }

    /** SQL for a jsonb of {@code levels} nested arrays around {@code 1}, as an object {@code {"v": ...}}. */
    private static String nested(int levels) {
        return "('{\"v\":' || repeat('[', " + levels + ") || '1' || repeat(']', " + levels + ") || '}')::jsonb";
    }

    private static int depth(JsonNode n) {
        int d = 0;
        while (n.isContainerNode() && n.size() == 1) {
            n = n.elements().next();
            d++;
        }
        return d;
    }

    private static String currentLsn() {
        return stack.pg.queryOne("SELECT pg_current_wal_lsn()");
    }

    private static boolean broadcast(JsonNode e, String channel, String event) {
        return "broadcast".equals(e.path("type").asText())
                && channel.equals(e.path("channel").asText())
                && event.equals(e.path("payload").path("event").asText());
    }

    private static boolean change(JsonNode e, String table, int id) {
        return "postgres_changes".equals(e.path("type").asText())
                && table.equals(e.path("payload").path("table").asText())
                && e.path("payload").path("new").path("id").asInt() == id;
    }

    private static int feedRow(JsonNode e) {
        return "postgres_changes".equals(e.path("type").asText())
                        && "feed".equals(e.path("payload").path("table").asText())
                ? e.path("payload").path("new").path("id").asInt()
                : -1;
    }

    private static int countFrom(RealtimeJsClient js, int from, Predicate<JsonNode> p) {
        List<JsonNode> events = js.events();
        int n = 0;
        for (int i = from; i < events.size(); i++) {
            if (p.test(events.get(i))) {
                n++;
            }
        }
        return n;
    }

    private static JsonNode health() {
        try {
            return JSON.readTree(stack.cdcHttp().health());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static HttpResponse<String> post(String path, String bearer, String body) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + stack.wsPort(0) + "/realtime/v1" + path))
                .header("Content-Type", "application/json")
                .header("apikey", stack.tokens.anon(a))
                .header("Authorization", "Bearer " + bearer)
                .timeout(T)
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode quarantine() throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + stack.cdcPort + "/v1/db/" + a + "/realtime/quarantine"))
                .header("apikey", stack.tokens.serviceRole(a))
                .timeout(T)
                .GET()
                .build();
        HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static JsonNode quarantineEntry(long seq) throws Exception {
        HttpRequest request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + stack.cdcPort + "/v1/db/" + a + "/realtime/quarantine/" + seq))
                .header("apikey", stack.tokens.serviceRole(a))
                .timeout(T)
                .GET()
                .build();
        HttpResponse<String> r = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return JSON.readTree(r.body());
    }

    private static JsonNode awaitQuarantined(Predicate<JsonNode> entry) {
        Map<String, JsonNode> found = new HashMap<>();
        Awaitility.await("a quarantined entry of project A").atMost(T).until(() -> {
            for (JsonNode e : quarantine().path("entries")) {
                if (entry.test(e)) {
                    found.put("e", e);
                    return true;
                }
            }
            return false;
        });
        return found.get("e");
    }
}
