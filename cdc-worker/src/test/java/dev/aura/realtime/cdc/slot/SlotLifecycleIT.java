package dev.aura.realtime.cdc.slot;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.CdcFixtureAndLogs;
import dev.aura.realtime.cdc.CdcSources;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.testkit.PostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.PGReplicationStream;

/**
 * C3 and C5 on a dedicated server whose slots are invalidated after 1 MB of WAL
 * ({@code max_slot_wal_keep_size=1MB}, {@code wal_keep_size=0}) and where no table is enabled
 * unless a test enables it.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@EnumSource(CdcSource.class)
class SlotLifecycleIT extends CdcFixtureAndLogs {
    @Parameter
    CdcSource source;

    private static PostgresServer pg;

    @BeforeAll
    static void startServer() {
        pg = PostgresServer.builder()
                .setting("max_slot_wal_keep_size", "1MB")
                .setting("wal_keep_size", "0")
                .start();
    }

    @AfterAll
    static void stopServer() {
        pg.close();
    }

    @Override
    protected PostgresServer postgres() {
        return pg;
    }

    @Test
    void aLostSlotIsRecreatedWithTheGapLoggedCountedAndToldToClients() throws Exception {
        fx.startWorker(CdcSources.env(source));
        Lsn before = Lsn.parse(fx.slotColumn("confirmed_flush_lsn"));
        fx.stopWorker();

        // A burst of WAL while nobody advances the slot: Postgres removes the WAL it needed.
        pg.execute("CREATE TABLE IF NOT EXISTS burst(id int, v text)");
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ZERO)
                .until(() -> {
                    pg.execute(
                            "INSERT INTO burst SELECT g, md5(g::text) FROM generate_series(1, 20000) g",
                            "SELECT pg_switch_wal()",
                            "CHECKPOINT");
                    return "lost".equals(fx.slotColumn("wal_status"));
                });
        int statusesBefore = fx.statuses.size();

        fx.startWorker(CdcSources.env(source));

        assertThat(fx.slotColumn("wal_status")).isIn("reserved", "extended");
        Lsn after = Lsn.parse(fx.slotColumn("confirmed_flush_lsn"));
        assertThat(after).isGreaterThan(before);
        List<String> gapLog = logs.lines(Level.ERROR, "was lost");
        assertThat(gapLog).hasSize(1);
        assertThat(gapLog.get(0))
                .contains("Changes between " + before + " and ")
                .contains("are lost for good");
        assertThat(fx.metric("aura_cdc_slot_recreations_total")).isEqualTo(1.0);

        // Clients hear "inactive, with this gap" first, then "active" (ws-front turns them into system messages).
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> fx.statuses.stream()
                        .skip(statusesBefore)
                        .anyMatch(s -> s.get("active").asBoolean() && s.hasNonNull("gap_from")));
        List<JsonNode> seen = fx.statuses.stream()
                .skip(statusesBefore)
                .filter(s -> s.hasNonNull("gap_from"))
                .toList();
        JsonNode first = seen.get(0);
        assertThat(first.get("active").asBoolean()).isFalse();
        assertThat(first.get("reason").asText()).startsWith("slot_lost: ");
        assertThat(first.get("gap_from").asText()).isEqualTo(before.toString());
        assertThat(Lsn.parse(first.get("gap_to").asText())).isGreaterThan(before);
        assertThat(seen)
                .anyMatch(s -> s.get("active").asBoolean() && s.get("reason").isNull());
        assertThat(fx.health().get("cdc_active").asBoolean()).isTrue();
    }

    @Test
    void aSlotHeldByAnotherProcessIsANamedStateAndIsTakenOverWhenReleased() throws Exception {
        pg.execute("SELECT pg_create_logical_replication_slot('" + fx.slot + "', 'wal2json')");
        Properties props = new Properties();
        PGProperty.USER.set(props, "postgres");
        PGProperty.REPLICATION.set(props, "database");
        PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
        try (Connection holder =
                DriverManager.getConnection("jdbc:postgresql://127.0.0.1:" + pg.port() + "/postgres", props)) {
            PGReplicationStream stream = holder.unwrap(PGConnection.class)
                    .getReplicationAPI()
                    .replicationStream()
                    .logical()
                    .withSlotName(fx.slot)
                    .withSlotOption("format-version", "2")
                    .start();
            String pid = fx.slotColumn("active_pid");
            assertThat(pid).isNotNull();

            fx.startWorkerInactive(CdcSources.env(source));
            JsonNode health = fx.awaitReason("slot_active_elsewhere", Duration.ofSeconds(20));
            assertThat(health.get("reason").asText()).contains("is active for PID " + pid);
            assertThat(health.get("cdc_active").asBoolean()).isFalse();
            // Retried with exponential backoff (100 ms doubling to 5 s), not a tight loop.
            Awaitility.await()
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> logs.count(Level.WARN, "[CdcNotActive] slot_active_elsewhere") >= 3);
            long attempts = logs.count(Level.WARN, "[CdcNotActive] slot_active_elsewhere");
            Thread.sleep(3000);
            long later = logs.count(Level.WARN, "[CdcNotActive] slot_active_elsewhere");
            // After three attempts the backoff is at least 400 ms and doubling, so 3 s hold at most
            // four more; a loaded machine only lowers that, and a tight loop would log dozens.
            assertThat(later - attempts).isLessThanOrEqualTo(4L);
            // still retrying, not given up: another attempt within the 5 s cap (30 s bounds a hang)
            Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .until(() -> logs.count(Level.WARN, "[CdcNotActive] slot_active_elsewhere") > later);
            assertThat(fx.worker().state().snapshot().leader()).isTrue();
            stream.close();
        }
        Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> fx.health().get("cdc_active").asBoolean());
    }

    /**
     * No enabled table means no registered project either: every registered project's realtime
     * messages table is captured (docs/design.md H2), so the projects earlier tests registered on
     * this server are removed first, and this test's project is registered only for its second half.
     */
    @Test
    void withNoEnabledTableNothingIsDecodedButTheSlotStillAdvances() throws Exception {
        pg.execute("DO $$ BEGIN IF to_regclass('aura_platform.projects') IS NOT NULL THEN"
                + " DELETE FROM aura_platform.realtime_tables; DELETE FROM aura_platform.projects; END IF; END $$");
        fx.startWorker(CdcSources.env(source));
        fx.sql(
                "CREATE SCHEMA IF NOT EXISTS \"" + fx.schema + "\"",
                "CREATE TABLE " + fx.table("t") + "(id int PRIMARY KEY)",
                "INSERT INTO " + fx.table("t") + " SELECT generate_series(1, 100)");
        Lsn written = Lsn.parse(fx.queryOne("SELECT pg_current_wal_flush_lsn()"));
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> Lsn.parse(fx.slotColumn("confirmed_flush_lsn")).compareTo(written) >= 0);
        assertThat(fx.metric("aura_cdc_polls_total")).isPositive();
        assertThat(fx.metric("aura_cdc_batch_rows_sum"))
                .as("no peek, so no decoded rows")
                .isZero();
        assertThat(fx.received).isEmpty();

        // The same worker captures the table as soon as it is enabled (it was idle, not broken).
        fx.createProject();
        fx.subscribe("t", "*", null);
        fx.enable("t");
        fx.awaitCaptured("t");
        fx.sql("INSERT INTO " + fx.table("t") + " VALUES (101)");
        fx.await(r -> r.size() == 1, Duration.ofSeconds(10));
        assertThat(fx.received.get(0).data().get("record").get("id").asInt()).isEqualTo(101);
    }
}
