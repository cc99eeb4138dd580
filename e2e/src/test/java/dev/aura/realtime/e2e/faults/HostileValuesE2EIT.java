package dev.aura.realtime.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 36, point 5: generated hostile values, driven through a real cdc-worker and ws-front with
 * the real realtime-js (docs/design.md C13). For every case of {@link HostileCases} (row values of
 * every column type at and past each limit, message topics, events and payloads, table, column and
 * enum names, filters) project A runs it, and then, on the one shard A shares with project B:
 * B's row committed after it arrives within 2 s, {@code cdc_active} stayed true, the slot's
 * {@code confirmed_flush_lsn} moved past it, and A's subscriber received the change or its error
 * (never silence).
 *
 * <p>The sized run is part of the README test command ({@value #DEFAULT_CASES} cases); the longer
 * run is {@code scripts/hostile-values.sh} ({@code -Daura.hostile.cases=N}). A failure prints the
 * seed: {@code -Daura.hostile.seed=S} replays it.
 */
class HostileValuesE2EIT {
    static final int DEFAULT_CASES = 100;
    private static final Duration T = Duration.ofSeconds(30);
    private static final Duration VICTIM_BOUND = Duration.ofSeconds(2);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static E2eStack stack;
    private static String a;
    private static String b;
    private static RealtimeJsClient aClient;
    private static RealtimeJsClient bClient;
    private static int bRows;

    @BeforeAll
    static void start() {
        stack = E2eStack.start(PostgresServer.shared(), NatsServer.shared(), 1, Map.of("CDC_NUM_SHARDS", "1"));
        a = stack.projectId;
        b = UUID.randomUUID().toString();
        stack.createProject(b);
        stack.awaitRealtimeSchema(T);
        StringBuilder labels = new StringBuilder();
        for (String l : HostileCases.ENUM_LABELS) {
            labels.append(labels.isEmpty() ? "" : ", ")
                    .append('\'')
                    .append(HostileCases.sqlText(l))
                    .append('\'');
        }
        stack.sql(
                "CREATE TYPE \"" + stack.schema + "\".hostile_enum AS ENUM (" + labels + ")",
                "SET search_path = \"" + stack.schema + "\", public; CREATE TABLE " + stack.table("vals")
                        + HostileCases.VALS_COLUMNS,
                "GRANT SELECT ON " + stack.table("vals") + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + stack.table("vals") + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY everyone ON " + stack.table("vals") + " FOR SELECT USING (true)");
        stack.enable("vals");
        stack.createEnabledTable(b, "feed", "(id int PRIMARY KEY, body text)");

        aClient = RealtimeJsClient.start();
        aClient.connect(stack.wsUrl(0), stack.tokens.anon(a), "2.0.0", Map.of());
        aClient.channel("vals");
        aClient.onPostgresChanges("vals", Map.of("event", "INSERT", "schema", "public", "table", "vals"));
        aClient.subscribeAndAwait("vals", T);

        bClient = RealtimeJsClient.start();
        bClient.connect(stack.wsUrl(0), stack.tokens.anon(b), "2.0.0", Map.of());
        bClient.channel("b-feed");
        bClient.onPostgresChanges("b-feed", Map.of("event", "*", "schema", "public", "table", "feed"));
        bClient.subscribeAndAwait("b-feed", T);
        victimDeliversWithin(T);
    }

    @AfterAll
    static void stop() {
        for (RealtimeJsClient js : new RealtimeJsClient[] {aClient, bClient}) {
            if (js != null) {
                js.close();
            }
        }
        if (stack != null) {
            stack.close();
        }
    }

    @Test
    void generatedHostileValuesNeverStopAnotherProjectAndTheirOwnSubscribersHearOfThem() {
        int cases = Integer.getInteger("aura.hostile.cases", DEFAULT_CASES);
        long seed = Long.getLong("aura.hostile.seed", System.nanoTime());
        HostileCases gen = new HostileCases(seed);
        Map<HostileCases.Kind, Integer> byKind = new TreeMap<>();
        HostileCases.Case longest = null;
        long longestMs = -1;
        int committed = 0;
        for (int i = 0; i < cases; i++) {
            HostileCases.Case c = gen.next();
            System.out.printf("HostileValuesE2EIT case %d: %s %s%n", c.n(), c.kind(), c.what());
            long started = System.nanoTime();
            try {
                if (run(c)) {
                    committed++;
                }
            } catch (AssertionError | RuntimeException e) {
                System.out.println(ServiceDiagnosis.of(stack));
                throw new AssertionError(
                        "case " + c.n() + " of seed " + seed + " (" + c.kind() + ": " + c.what() + ", SQL "
                                + abbreviate(c.sql().toString()) + ", filter " + abbreviate(c.filter())
                                + "); replay with -Daura.hostile.seed=" + seed + ": " + e.getMessage(),
                        e);
            }
            long ms = (System.nanoTime() - started) / 1_000_000;
            byKind.merge(c.kind(), 1, Integer::sum);
            if (ms > longestMs) {
                longestMs = ms;
                longest = c;
            }
        }
        System.out.printf(
                "HostileValuesE2EIT: %d cases (seed %d), %d committed by Postgres, by kind %s; longest case #%d"
                        + " (%s: %s) took %d ms%n",
                cases, seed, committed, byKind, longest.n(), longest.kind(), longest.what(), longestMs);
    }

    /** Runs one case and checks what holds after it. @return whether Postgres committed it */
    private static boolean run(HostileCases.Case c) throws AssertionError {
        boolean committed = switch (c.kind()) {
            case ROW_VALUE -> rowValue(c);
            case MESSAGE -> message(c);
            case FILTER -> filter(c);
            case NAMES -> names(c);
        };
        String lsn = currentLsn();
        victimDeliversWithin(VICTIM_BOUND);
        Awaitility.await("confirmed_flush_lsn past " + lsn)
                .atMost(T)
                .until(() -> "t"
                        .equals(stack.pg.queryOne("SELECT confirmed_flush_lsn >= '" + lsn
                                + "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '" + stack.slot + "'")));
        JsonNode health = health();
        assertThat(health.path("cdc_active").asBoolean()).as(health.toString()).isTrue();
        return committed;
    }

    /** A's {@code vals} subscriber gets the row, or an event of the table with its error. */
    private static boolean rowValue(HostileCases.Case c) {
        int mark = aClient.eventCount();
        if (!trySql(c.sql())) {
            return false;
        }
        aClient.awaitEvent(
                mark,
                e -> "postgres_changes".equals(e.path("type").asText())
                        && "vals".equals(e.path("payload").path("table").asText())
                        && (e.path("payload").path("new").path("id").asInt() == c.n()
                                || e.path("payload").path("errors").isArray()),
                T);
        return true;
    }

    /** A joinable topic's subscriber gets the message or its error stub. */
    private static boolean message(HostileCases.Case c) {
        String channel = c.topic();
        boolean joined = channel != null && "SUBSCRIBED".equals(join(channel, Map.of(), null));
        int mark = aClient.eventCount();
        boolean committed = trySql(c.sql());
        if (committed && joined) {
            aClient.awaitEvent(
                    mark,
                    e -> "broadcast".equals(e.path("type").asText())
                            && channel.equals(e.path("channel").asText()),
                    T);
        }
        if (channel != null) {
            aClient.unsubscribe(channel);
        }
        return committed;
    }

    /** A join with a hostile filter is answered (subscribed or refused), and a row after it stops nothing. */
    private static boolean filter(HostileCases.Case c) {
        String channel = "f-" + c.n();
        String status = join(
                channel, Map.of("event", "*", "schema", "public", "table", "vals", "filter", c.filter()), "postgres");
        assertThat(status).as("the join's answer").isIn("SUBSCRIBED", "CHANNEL_ERROR", "TIMED_OUT");
        boolean committed = trySql(List.of("INSERT INTO %VALS% (id, f) VALUES (" + c.n() + ", 'x')"));
        aClient.unsubscribe(channel);
        return committed;
    }

    /** A table with a hostile name: enabled (or refused with a clear error), subscribed, written. */
    private static boolean names(HostileCases.Case c) {
        if (!trySql(c.sql())) {
            return false;
        }
        var response = stack.control().putRealtime(a, c.table(), "{\"enabled\":true}", stack.tokens.serviceRole(a));
        assertThat(response.statusCode()).as(response.body()).isIn(200, 404, 422);
        if (response.statusCode() != 200) {
            return true;
        }
        String channel = "n-" + c.n();
        String status = join(channel, Map.of("event", "*", "schema", "public", "table", c.table()), "postgres");
        int mark = aClient.eventCount();
        String q = "\"" + c.table().replace("\"", "\"\"") + "\"";
        boolean committed = trySql(List.of("INSERT INTO %S%." + q + " (id, " + c.filter() + ") VALUES (1, 'v')"));
        if (committed && "SUBSCRIBED".equals(status)) {
            aClient.awaitEvent(
                    mark,
                    e -> "postgres_changes".equals(e.path("type").asText())
                            && channel.equals(e.path("channel").asText()),
                    T);
        }
        aClient.unsubscribe(channel);
        return committed;
    }

    /** Joins {@code channel} (postgres_changes binding when {@code kind} is set, else broadcast) and returns its status. */
    private static String join(String channel, Map<String, ?> binding, String kind) {
        aClient.channel(channel);
        if (kind == null) {
            aClient.onBroadcast(channel, "*");
        } else {
            aClient.onPostgresChanges(channel, binding);
        }
        int mark = aClient.eventCount();
        aClient.subscribe(channel);
        return aClient.awaitEvent(
                        mark,
                        e -> "status".equals(e.path("type").asText())
                                && channel.equals(e.path("channel").asText())
                                && !"CLOSED".equals(e.path("status").asText()),
                        T)
                .path("status")
                .asText();
    }

    /** Runs A's statements in one transaction; false when Postgres refused them (the value is not one it accepts). */
    private static boolean trySql(List<String> sql) {
        try (var c = stack.pg.connect();
                var s = c.createStatement()) {
            c.setAutoCommit(false);
            for (String each : sql) {
                s.execute(each.replace("%VALS%", stack.table("vals"))
                        .replace("%RT%", stack.realtimeSchema())
                        .replace("%S%", "\"" + stack.schema + "\""));
            }
            c.commit();
            return true;
        } catch (java.sql.SQLException e) {
            return false;
        }
    }

    private static void victimDeliversWithin(Duration bound) {
        int row = ++bRows;
        int mark = bClient.eventCount();
        stack.sql("INSERT INTO " + stack.table(b, "feed") + " VALUES (" + row + ", 'victim')");
        Awaitility.await("B's row " + row)
                .atMost(bound)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> count(
                                bClient,
                                mark,
                                e -> "postgres_changes".equals(e.path("type").asText())
                                        && e.path("payload")
                                                        .path("new")
                                                        .path("id")
                                                        .asInt()
                                                == row)
                        == 1);
    }

    private static int count(RealtimeJsClient js, int from, Predicate<JsonNode> p) {
        List<JsonNode> events = js.events();
        int n = 0;
        for (int i = from; i < events.size(); i++) {
            if (p.test(events.get(i))) {
                n++;
            }
        }
        return n;
    }

    private static String currentLsn() {
        return stack.pg.queryOne("SELECT pg_current_wal_lsn()");
    }

    private static JsonNode health() {
        try {
            return JSON.readTree(stack.cdcHttp().health());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String abbreviate(String s) {
        return s == null ? "null" : s.length() > 300 ? s.substring(0, 300) + "..." : s;
    }
}
