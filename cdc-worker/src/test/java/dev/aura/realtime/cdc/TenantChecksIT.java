package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How a tenant's failing or slow policy is contained (docs/security.md): it denies its own
 * subscribers for the changes it failed on, never the batch, never another subscriber, and never
 * reaches the CDC status or {@code /health}.
 */
class TenantChecksIT {
    private static CdcFixture fx;

    @BeforeAll
    static void start() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of());
        fx.createProject();
    }

    @AfterAll
    static void stop() throws Exception {
        fx.close();
    }

    /** A table the client roles may read, RLS on with {@code policy} as its SELECT policy, enabled. */
    private static String table(String name, String policy) {
        String t = fx.table(name);
        fx.sql(
                "CREATE TABLE " + t + "(id bigserial PRIMARY KEY, body text)",
                "ALTER TABLE " + t + " REPLICA IDENTITY FULL",
                "GRANT SELECT ON " + t + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + t + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY p ON " + t + " FOR SELECT USING (" + policy + ")");
        fx.enable(name);
        return t;
    }

    private static List<String> bodiesFor(String subId, String table) {
        List<String> out = new ArrayList<>();
        for (CdcFixture.Received r : fx.received) {
            if (table.equals(r.data().get("table").asText())
                    && r.body().get("allowed_sub_ids").toString().contains(subId)
                    && r.data().path("record").has("body")) {
                out.add(r.data().get("record").get("body").asText());
            }
        }
        return out;
    }

    @Test
    void aPolicyThatRaisesForOneRowDeniesThatRowOnly() throws Exception {
        String t = table("raises", "CASE WHEN body = 'boom' THEN length(body) / 0 = 1 ELSE true END");
        String anon = fx.subscribeAs(fx.projectId, "raises", "*", null, "anon", null);
        fx.awaitCaptured("raises");
        // one transaction, so the three changes reach the shard together and share one check
        fx.sql("INSERT INTO " + t + "(body) VALUES ('one'), ('boom'), ('three')");
        fx.sql("INSERT INTO " + t + "(body) VALUES ('after')");
        fx.await(l -> bodiesFor(anon, "raises").contains("after"), Duration.ofSeconds(15));
        assertThat(bodiesFor(anon, "raises")).containsExactly("one", "three", "after");
    }

    @Test
    void aPolicyRaisingAConnectionSqlStateIsItsOwnFailureAndItsTextGoesNowhere() throws Exception {
        fx.sql("CREATE FUNCTION \"" + fx.schema + "\".liar() RETURNS boolean LANGUAGE plpgsql AS $$"
                + " BEGIN RAISE EXCEPTION 'TENANT-TEXT-08006' USING ERRCODE = '08006'; END $$");
        String t = table("liar", "\"" + fx.schema + "\".liar()");
        String anon = fx.subscribeAs(fx.projectId, "liar", "*", null, "anon", null);
        String service = fx.subscribe("liar", "*", null);
        fx.awaitCaptured("liar");
        int statuses = fx.statuses.size();
        fx.sql("INSERT INTO " + t + "(body) VALUES ('a'), ('b')");
        fx.await(l -> bodiesFor(service, "liar").size() == 2, Duration.ofSeconds(15));
        fx.awaitSettled();
        // denied for the anon subscriber; not an outage: nothing re-read, the CDC stayed active
        assertThat(bodiesFor(anon, "liar")).isEmpty();
        assertThat(fx.worker().state().snapshot().active()).isTrue();
        assertThat(fx.health().toString()).doesNotContain("TENANT-TEXT");
        assertThat(fx.statuses.subList(statuses, fx.statuses.size()).toString())
                .doesNotContain("TENANT-TEXT")
                .doesNotContain("postgres_unavailable");
        assertThat(fx.received.toString()).doesNotContain("TENANT-TEXT");
    }

    /** The {@code errors} of the value-less events {@code subId} received for {@code table}. */
    private static List<String> errorsFor(String subId, String table) {
        List<String> out = new ArrayList<>();
        for (CdcFixture.Received r : fx.received) {
            if (table.equals(r.data().get("table").asText())
                    && r.body().get("allowed_sub_ids").toString().contains(subId)
                    && r.data().path("errors").isArray()) {
                r.data().get("errors").forEach(e -> out.add(e.asText()));
            }
        }
        return out;
    }

    /**
     * Slow is late, not lost (docs/design.md C14): the batch's check times out, so the project's
     * changes go to its late lane, where each is checked alone; the one whose check cannot finish
     * even alone reaches its subscriber as {@code Error 504} (and the quarantine), never silence.
     */
    @Test
    void aSlowRowTimesOutAloneAndAStatementThatCatchesItsTimeoutIsTerminated() throws Exception {
        fx.sql("CREATE FUNCTION \"" + fx.schema + "\".stubborn(b text) RETURNS boolean LANGUAGE plpgsql AS $$"
                + " BEGIN IF b = 'slow' THEN PERFORM pg_sleep(30); END IF; RETURN true;"
                + " EXCEPTION WHEN query_canceled THEN PERFORM pg_sleep(30); RETURN true; END $$");
        String t = table("stubborn", "\"" + fx.schema + "\".stubborn(body)");
        String anon = fx.subscribeAs(fx.projectId, "stubborn", "*", null, "anon", null);
        fx.awaitCaptured("stubborn");
        long started = System.nanoTime();
        fx.sql("INSERT INTO " + t + "(body) VALUES ('fast one'), ('fast two'), ('slow')");
        fx.sql("INSERT INTO " + t + "(body) VALUES ('later')");
        fx.await(l -> bodiesFor(anon, "stubborn").contains("later"), Duration.ofSeconds(20));
        // the watchdog ended the stubborn statements long before their 30 s
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
        assertThat(bodiesFor(anon, "stubborn")).containsExactly("fast one", "fast two", "later");
        assertThat(errorsFor(anon, "stubborn")).containsExactly("Error 504: Gateway Timeout");
        assertThat(fx.queryOne("SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%stubborn%'"
                        + " AND usename = '" + fx.slot + "_tenant' AND state = 'active'"))
                .isEqualTo("0");
    }
}
