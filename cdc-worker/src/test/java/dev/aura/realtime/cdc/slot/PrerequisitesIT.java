package dev.aura.realtime.cdc.slot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.CdcFixture;
import dev.aura.realtime.cdc.CdcFixtureAndLogs;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * C2: each missing prerequisite is named in {@code /health} {@code reason_code} and in the logs,
 * {@code cdc_active} stays false, and the worker keeps retrying: once an operator fixes the cause,
 * it becomes active without a restart. The replication role is a dedicated login role whose
 * attributes and role-level settings create each failure on the shared server (the two
 * wal2json failures are Postgres's own errors: a {@code dynamic_library_path} without wal2json
 * and, on servers that know it, an {@code output_plugin_libraries} without it).
 */
class PrerequisitesIT extends CdcFixtureAndLogs {
    private final PostgresServer pg = PostgresServer.shared();
    private final String role =
            "aura_pre_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

    @AfterEach
    void dropRole() {
        fx.stopWorker(); // the worker connects as the role: stop it before the role goes
        pg.execute("DROP ROLE IF EXISTS " + role);
    }

    private Map<String, String> asRole() {
        return Map.of("POSTGRES_REPLICATION_URL", pg.jdbcUrl(role, "unused"), "POSTGRES_URL", pg.jdbcUrl());
    }

    /** Asserts the failure is reported and retried, then applies the fix and waits for recovery. */
    private void assertReportedRetriedAndRecovers(String code, String logText, String fix) throws Exception {
        fx.startWorkerInactive(asRole());
        JsonNode health = fx.awaitReason(code, Duration.ofSeconds(20));
        assertThat(health.get("cdc_active").asBoolean()).isFalse();
        assertThat(health.get("reason").asText()).startsWith(code + ": ").contains(logText);
        // Retried with backoff, never a crash: the same failure is logged again.
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(() -> logs.count(Level.WARN, "[CdcNotActive] " + code) >= 2);
        assertThat(logs.lines(Level.ERROR, "[CdcNotActive] " + code))
                .first()
                .asString()
                .contains(logText);

        pg.execute(fix);
        Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> fx.health().get("cdc_active").asBoolean());
        assertThat(fx.health().get("reason").isNull()).isTrue();
    }

    @Test
    void aRoleWithoutReplicationIsNamedAndRetriedUntilGranted() throws Exception {
        pg.execute("CREATE ROLE " + role + " LOGIN");
        assertReportedRetriedAndRecovers(
                "no_replication_privilege", "neither REPLICATION nor SUPERUSER", "ALTER ROLE " + role + " REPLICATION");
    }

    /**
     * Postgres minor releases differ here (docs/operations.md, "Postgres versions"): 15.20 and later
     * load only the output plugins listed in {@code output_plugin_libraries}; 15.18 does not know
     * that parameter and loads any installed plugin. The test asks the server it runs on which kind
     * it is and asserts that server's behaviour; both branches assert, neither skips.
     */
    @Test
    void wal2jsonFollowsThisServersOutputPluginPolicy() throws Exception {
        String version = pg.serverVersion();
        boolean listsPlugins = pg.knowsSetting("output_plugin_libraries");
        System.out.printf(
                "PrerequisitesIT: Postgres %s %s%n",
                version,
                listsPlugins
                        ? "loads only plugins in output_plugin_libraries"
                        : "does not know output_plugin_libraries");
        if (listsPlugins) {
            // 15.20+: a list without wal2json is refused by name, and retried until it is allowed.
            pg.execute(
                    "CREATE ROLE " + role + " LOGIN SUPERUSER",
                    "ALTER ROLE " + role + " SET output_plugin_libraries = pgoutput, test_decoding");
            assertReportedRetriedAndRecovers(
                    "wal2json_not_allowed",
                    "library \"wal2json\" may not be used as an output plugin",
                    "ALTER ROLE " + role + " RESET output_plugin_libraries");
        } else {
            // 15.18 and older: the parameter does not exist, and wal2json loads without it.
            assertThatThrownBy(() -> pg.execute("ALTER ROLE postgres SET output_plugin_libraries = 'wal2json'"))
                    .as("server %s should not know output_plugin_libraries", version)
                    .hasMessageContaining("unrecognized configuration parameter \"output_plugin_libraries\"");
            pg.execute("CREATE ROLE " + role + " LOGIN SUPERUSER");
            fx.startWorkerInactive(asRole());
            Awaitility.await()
                    .atMost(Duration.ofSeconds(20))
                    .until(() -> fx.health().get("cdc_active").asBoolean());
            assertThat(logs.count(Level.ERROR, "[CdcNotActive] wal2json_not_allowed"))
                    .isZero();
        }
    }

    @Test
    void wal2jsonMissingIsNamedAndRetriedUntilInstalled() throws Exception {
        pg.execute(
                "CREATE ROLE " + role + " LOGIN SUPERUSER",
                "ALTER ROLE " + role + " SET dynamic_library_path = '/nonexistent/aura'");
        assertReportedRetriedAndRecovers(
                "wal2json_missing",
                "could not access file \"wal2json\"",
                "ALTER ROLE " + role + " RESET dynamic_library_path");
    }

    @Test
    void walLevelReplicaIsNamedAndUnlimitedSlotWalIsWarnedAbout() throws Exception {
        try (PostgresServer replica = PostgresServer.builder()
                        .setting("wal_level", "replica")
                        .setting("max_slot_wal_keep_size", "-1")
                        .start();
                CdcFixture other = new CdcFixture(replica, NatsServer.shared())) {
            other.startWorkerInactive(Map.of());
            JsonNode health = other.awaitReason("wal_level_not_logical", Duration.ofSeconds(30));
            assertThat(health.get("cdc_active").asBoolean()).isFalse();
            assertThat(health.get("reason").asText()).contains("wal_level is 'replica'");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(15))
                    .until(() -> logs.count(Level.ERROR, "[CdcNotActive] wal_level_not_logical") >= 2);
            assertThat(logs.count(Level.WARN, "max_slot_wal_keep_size = -1")).isPositive();
            assertThat(other.worker().state().snapshot().active()).isFalse();
        }
    }
}
