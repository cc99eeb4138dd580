package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import io.nats.client.Message;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Join storms against the join-time checks (issue 23, docs/design.md C7 "Join storms"): a real
 * Postgres and NATS with an in-process worker answering ws-front's subscription-check and
 * channel-access requests, asked here as ws-front asks them.
 *
 * <p>The attacks were run first against the build before the fix (commit e639a6f): {@link
 * #aFloodOfOneProjectsChecksDoesNotRefuseAnothers} failed (the other project's checks were refused
 * "too many subscription checks at once" behind the flood: admission was one semaphore for all
 * projects) and {@link #identicalChecksAreJudgedOnceAndAgainAfterAGrantOrSettingChanges} failed (600
 * identical checks at once were partly refused the same way). {@link
 * #twoProjectsWithSlowReadPoliciesLeaveAThirdProjectsReadChecksAlone} passed then too: the audit's
 * "two slow projects take the lane whole" did not reproduce, because each project's share semaphore
 * kept the slow projects' waiters off the lane's queue; it guards the batched lane, where one
 * project's batch could otherwise hold a connection for many slow checks. {@link
 * #oneSlowPolicyInABatchDeniesOnlyItsOwnCheck} passed then too (each check had its own
 * transaction) and guards the savepoint batches.
 */
class JoinStormIT {
    private static final Duration T = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = WireJson.mapper();
    private static CdcFixture fx;

    @BeforeAll
    static void start() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of("CDC_TABLE_REFRESH_MS", "200"));
        fx.createProject();
        fx.sql(
                "CREATE TABLE " + fx.table("rooms") + " (id bigint PRIMARY KEY, owner text, body text)",
                "GRANT USAGE ON SCHEMA \"" + fx.schema + "\" TO aura_anon, aura_authenticated",
                "GRANT SELECT ON " + fx.table("rooms") + " TO aura_anon, aura_authenticated");
        fx.enable("rooms");
        awaitProvisioned(fx.projectId);
    }

    @AfterAll
    static void stop() throws Exception {
        fx.close();
    }

    private static void awaitProvisioned(String projectId) {
        Awaitility.await()
                .atMost(T)
                .until(() -> String.valueOf(RealtimeSchemas.VERSION)
                        .equals(fx.queryOne("SELECT realtime_schema_version FROM aura_platform.projects"
                                + " WHERE project_id = '" + projectId + "'")));
    }

    /** Registers another project whose read policy on its messages is {@code policy} (an SQL boolean). */
    private static String projectWithReadPolicy(String policy) {
        String id = UUID.randomUUID().toString();
        String schema = "project_" + id.replace('-', '_');
        fx.sql(
                "CREATE SCHEMA \"" + schema + "\"",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + id + "', '" + schema + "')");
        // provisioning happens on first use or by the upkeep; ask once so it starts now
        ask(ChannelAccess.Request.settings(id));
        awaitProvisioned(id);
        String rt = "\"" + RealtimeSchemas.nameOf(id) + "\"";
        fx.sql("CREATE POLICY reads ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + policy + ")");
        return id;
    }

    private static String claims(String project) {
        return JSON.createObjectNode()
                .put("role", "authenticated")
                .put("ref", project)
                .put("sub", UUID.randomUUID().toString())
                .toString();
    }

    private static ChannelAccess.Reply ask(ChannelAccess.Request request) {
        try {
            Message reply =
                    fx.nats.request(Subjects.CHANNEL_ACCESS, JSON.writeValueAsBytes(request), Duration.ofSeconds(10));
            assertThat(reply).as("a cdc-worker answers " + request.op()).isNotNull();
            return JSON.readValue(reply.getData(), ChannelAccess.Reply.class);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static CompletableFuture<ChannelAccess.Reply> readAsync(String project, String topic) {
        try {
            return fx.nats
                    .requestWithTimeout(
                            Subjects.CHANNEL_ACCESS,
                            JSON.writeValueAsBytes(
                                    ChannelAccess.Request.read(project, topic, "authenticated", claims(project))),
                            Duration.ofSeconds(10))
                    .thenApply(m -> {
                        try {
                            return JSON.readValue(m.getData(), ChannelAccess.Reply.class);
                        } catch (java.io.IOException e) {
                            throw new IllegalStateException(e);
                        }
                    });
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static CompletableFuture<SubscriptionCheck.Reply> checkAsync(SubscriptionCheck.Request request) {
        try {
            return fx.nats
                    .requestWithTimeout(
                            Subjects.SUBSCRIPTION_CHECK, JSON.writeValueAsBytes(request), Duration.ofSeconds(10))
                    .thenApply(m -> {
                        try {
                            return JSON.readValue(m.getData(), SubscriptionCheck.Reply.class);
                        } catch (java.io.IOException e) {
                            throw new IllegalStateException(e);
                        }
                    });
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static SubscriptionCheck.Reply check(String filter, String role) throws Exception {
        return checkAsync(new SubscriptionCheck.Request(fx.projectId, "rooms", filter, "*", role, null))
                .get(10, TimeUnit.SECONDS);
    }

    @Test
    void twoProjectsWithSlowReadPoliciesLeaveAThirdProjectsReadChecksAlone() throws Exception {
        String slowA = projectWithReadPolicy("pg_sleep(0.2) IS NOT NULL");
        String slowB = projectWithReadPolicy("pg_sleep(0.2) IS NOT NULL");
        String fast = projectWithReadPolicy("true");
        AtomicBoolean flooding = new AtomicBoolean(true);
        List<Thread> floods = new ArrayList<>();
        for (String slow : List.of(slowA, slowB)) {
            for (int t = 0; t < 8; t++) {
                floods.add(Thread.startVirtualThread(() -> {
                    while (flooding.get()) {
                        readAsync(slow, "room:" + UUID.randomUUID())
                                .handle((r, e) -> r)
                                .join();
                    }
                }));
            }
        }
        try {
            Thread.sleep(500); // the slow projects hold the lane now
            List<ChannelAccess.Reply> replies = new ArrayList<>();
            for (int i = 0; i < 30; i++) {
                replies.add(readAsync(fast, "room:" + i).get(10, TimeUnit.SECONDS));
            }
            assertThat(replies)
                    .as("every read check of the third project is answered, none told to try again")
                    .allSatisfy(r -> {
                        assertThat(r.error()).isNull();
                        assertThat(r.readBroadcast()).isTrue();
                    });
        } finally {
            flooding.set(false);
            for (Thread t : floods) {
                t.join(10_000);
            }
        }
    }

    @Test
    void oneSlowPolicyInABatchDeniesOnlyItsOwnCheck() throws Exception {
        // 2 s is far beyond CDC_TENANT_STATEMENT_TIMEOUT_MS (250 ms): that check times out alone
        String project = projectWithReadPolicy(
                "CASE WHEN current_setting('realtime.topic', true) = 'slow' THEN pg_sleep(2) IS NOT NULL ELSE true END");
        List<CompletableFuture<ChannelAccess.Reply>> fastOnes = new ArrayList<>();
        CompletableFuture<ChannelAccess.Reply> slow = null;
        for (int i = 0; i < 60; i++) {
            if (i == 10) {
                slow = readAsync(project, "slow");
            }
            fastOnes.add(readAsync(project, "fast:" + i));
        }
        for (CompletableFuture<ChannelAccess.Reply> f : fastOnes) {
            ChannelAccess.Reply r = f.get(15, TimeUnit.SECONDS);
            assertThat(r.error()).isNull();
            assertThat(r.readBroadcast())
                    .as("a fast topic batched with a slow one is allowed")
                    .isTrue();
        }
        ChannelAccess.Reply r = slow.get(15, TimeUnit.SECONDS);
        assertThat(r.readBroadcast())
                .as("the slow policy's own check is denied (timed out)")
                .isFalse();
    }

    @Test
    void aFloodOfOneProjectsChecksDoesNotRefuseAnothers() throws Exception {
        String other = UUID.randomUUID().toString();
        String otherSchema = "project_" + other.replace('-', '_');
        fx.sql(
                "CREATE SCHEMA \"" + otherSchema + "\"",
                "CREATE TABLE \"" + otherSchema + "\".notes (id bigint PRIMARY KEY)",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + other + "', '" + otherSchema
                        + "')",
                "INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + other + "', 'notes')");
        List<CompletableFuture<SubscriptionCheck.Reply>> flood = new ArrayList<>();
        for (int i = 0; i < 6_000; i++) {
            // distinct filters: nothing to reuse, every one costs a judgement and a cast
            flood.add(checkAsync(
                    new SubscriptionCheck.Request(fx.projectId, "rooms", "id=eq." + i, "*", "authenticated", null)));
        }
        List<SubscriptionCheck.Reply> others = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            others.add(checkAsync(new SubscriptionCheck.Request(other, "notes", null, "*", "anon", null))
                    .get(10, TimeUnit.SECONDS));
        }
        assertThat(others)
                .as("the other project's checks are answered while the flood waits behind itself")
                .allSatisfy(
                        r -> assertThat(r.ok()).as(String.valueOf(r.error())).isTrue());
        CompletableFuture.allOf(flood.stream().map(f -> f.handle((r, e) -> r)).toArray(CompletableFuture[]::new))
                .get(60, TimeUnit.SECONDS);
    }

    @Test
    void identicalChecksAreJudgedOnceAndAgainAfterAGrantOrSettingChanges() throws Exception {
        double judgedBefore = fx.metric("aura_cdc_join_checks_judged_total");
        List<CompletableFuture<SubscriptionCheck.Reply>> storm = new ArrayList<>();
        for (int i = 0; i < 600; i++) {
            storm.add(checkAsync(
                    new SubscriptionCheck.Request(fx.projectId, "rooms", "owner=eq.ann", "*", "anon", null)));
        }
        for (CompletableFuture<SubscriptionCheck.Reply> f : storm) {
            assertThat(f.get(10, TimeUnit.SECONDS).ok()).isTrue();
        }
        assertThat(fx.metric("aura_cdc_join_checks_judged_total") - judgedBefore)
                .as("600 identical checks judged about once per batch, not 600 times")
                .isLessThan(20);

        fx.sql("REVOKE SELECT ON " + fx.table("rooms") + " FROM aura_anon");
        assertThat(check("owner=eq.ann", "anon").error())
                .as("a revoked grant is seen by the very next check")
                .contains("may not select it");
        fx.sql("GRANT SELECT (id, owner) ON " + fx.table("rooms") + " TO aura_anon");
        assertThat(check("owner=eq.ann", "anon").ok())
                .as("a column grant is seen too")
                .isTrue();
        assertThat(check("body=eq.x", "anon").error()).contains("may not select it");

        fx.sql("ALTER TABLE " + fx.table("rooms") + " ENABLE ROW LEVEL SECURITY");
        assertThat(check("owner=eq.ann", "anon").notice())
                .as("row level security turned on is seen by the next check")
                .contains("PostgresChangesDeleteNotDelivered");

        fx.disable("rooms");
        assertThat(check(null, "anon").error()).contains("RealtimeDisabledForConfiguration");
        fx.enable("rooms");
        assertThat(check(null, "anon").ok()).isTrue();
        fx.sql(
                "ALTER TABLE " + fx.table("rooms") + " DISABLE ROW LEVEL SECURITY",
                "GRANT SELECT ON " + fx.table("rooms") + " TO aura_anon");
    }
}
