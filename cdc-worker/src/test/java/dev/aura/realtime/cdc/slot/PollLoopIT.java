package dev.aura.realtime.cdc.slot;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.CdcFixtureAndLogs;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.testkit.PostgresServer;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** C4 with CDC_SOURCE=poll: the advance rule, idle backoff and the re-decode gauge; session pinning with both sources. */
class PollLoopIT extends CdcFixtureAndLogs {
    private final PostgresServer pg = PostgresServer.shared();

    private void watchedAndBulkTables() throws Exception {
        fx.createProject();
        fx.sql(
                "CREATE TABLE " + fx.table("watched") + "(id int PRIMARY KEY)",
                "CREATE TABLE " + fx.table("bulk") + "(id int PRIMARY KEY, v text)");
        fx.enable("watched");
        fx.subscribe("watched", "*", null);
        fx.awaitCaptured("watched");
    }

    private long retainedBytes() {
        return Long.parseLong(fx.queryOne(
                "SELECT pg_current_wal_flush_lsn() - restart_lsn FROM pg_replication_slots WHERE slot_name = '"
                        + fx.slot + "'"));
    }

    /** Both sources: neither pins WAL while only unwatched tables change. */
    @ParameterizedTest(name = "CDC_SOURCE={0}")
    @EnumSource(CdcSource.class)
    void fiftyMegabytesOnAnUnwatchedTableDoNotPinWal(CdcSource source) throws Exception {
        fx.startWorker(Map.of("CDC_SOURCE", source.configValue()));
        watchedAndBulkTables();
        long t0 = System.nanoTime();
        fx.sql("INSERT INTO " + fx.table("bulk")
                + " SELECT g, repeat(md5(g::text), 32) FROM generate_series(1, 50000) g");
        Lsn written = Lsn.parse(fx.queryOne("SELECT pg_current_wal_flush_lsn()"));
        assertThat(retainedBytes()).as("WAL written").isGreaterThan(50L * 1024 * 1024);

        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .until(() -> Lsn.parse(fx.slotColumn("confirmed_flush_lsn")).compareTo(written) >= 0);
        // restart_lsn follows once decoding sees a running-xacts record; CHECKPOINT writes one.
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    fx.sql("CHECKPOINT");
                    return retainedBytes() < 1024 * 1024;
                });
        System.out.printf("50 MB unwatched: confirmed and released in %d ms%n", (System.nanoTime() - t0) / 1_000_000);
        Awaitility.await() // /health shows the slot as of its last inspection (every 2 s)
                .atMost(Duration.ofSeconds(10))
                .until(() -> fx.health().get("slot").get("lag_bytes").asLong() < 1024 * 1024);

        fx.sql("INSERT INTO " + fx.table("watched") + " VALUES (1)");
        fx.await(r -> r.size() == 1, Duration.ofSeconds(10));
        assertThat(fx.received)
                .singleElement()
                .satisfies(r -> assertThat(r.subject()).endsWith(".watched"));
    }

    @Test
    void anEmptyPollBacksOffAndAFullBatchPollsAgainAtOnce() throws Exception {
        fx.startWorker(Map.of("CDC_SOURCE", "poll", "CDC_IDLE_BACKOFF_MS", "1000", "CDC_BATCH_SIZE", "4"));
        watchedAndBulkTables();
        double before = fx.metric("aura_cdc_polls_total");
        long idleFrom = System.nanoTime();
        Thread.sleep(3000);
        double polls = fx.metric("aura_cdc_polls_total") - before;
        long idleMs = (System.nanoTime() - idleFrom) / 1_000_000;
        // The mechanism is the sleep after an empty poll: at most one poll per second of idleness,
        // plus a few when other sessions' transactions (autovacuum, other tests' clean-up) produce
        // B/C rows, which count as non-empty. A loaded machine only lowers the count, so this upper
        // bound cannot be missed; without the backoff it would be >100.
        assertThat(polls)
                .as("polls in %d ms of idleness at 1 s backoff", idleMs)
                .isLessThanOrEqualTo(idleMs / 1000.0 + 8);
        // and the loop is alive: another poll follows (1 s backoff; 30 s only bounds a hang)
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> fx.metric("aura_cdc_polls_total") > before + polls);

        // 30 one-row transactions = 90 rows; a peek of upto_nchanges=4 returns 2 transactions. Sleeping
        // 1 s after each of those 15 full batches would take 15 s.
        try (Connection c = pg.connect();
                Statement s = c.createStatement()) {
            for (int i = 1; i <= 30; i++) {
                s.execute("INSERT INTO " + fx.table("watched") + " VALUES (" + i + ")");
            }
        }
        long committed = System.nanoTime();
        fx.await(r -> r.size() == 30, Duration.ofSeconds(30));
        long ms = (System.nanoTime() - committed) / 1_000_000;
        System.out.printf("30 transactions through batches of 4 rows: %d ms%n", ms);
        // A 1 s sleep after each of the 15 full batches would take at least 15 s whatever the
        // machine; polling again at once takes about 1-4 s, so 12 s leaves a loaded machine three
        // times that and still cannot be reached by the sleeping loop.
        assertThat(ms).isLessThan(12_000);
        assertThat(fx.received)
                .extracting(r -> r.data().get("record").get("id").asInt())
                .containsExactlyElementsOf(
                        java.util.stream.IntStream.rangeClosed(1, 30).boxed().toList());
    }

    /** Both sources: the stream source pins its walsender session through startup options. */
    @ParameterizedTest(name = "CDC_SOURCE={0}")
    @EnumSource(CdcSource.class)
    void theSessionIsPinnedToIsoUtcAndExactFloatsWhateverTheRoleDefaults(CdcSource source) throws Exception {
        String role =
                "aura_pin_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);
        pg.execute(
                "CREATE ROLE " + role + " LOGIN SUPERUSER",
                "ALTER ROLE " + role + " SET DateStyle = 'SQL, DMY'",
                "ALTER ROLE " + role + " SET TimeZone = 'America/New_York'",
                "ALTER ROLE " + role + " SET extra_float_digits = 0");
        try {
            fx.startWorker(dev.aura.realtime.cdc.CdcSources.env(
                    source, "POSTGRES_REPLICATION_URL", pg.jdbcUrl(role, "unused"), "POSTGRES_URL", pg.jdbcUrl()));
            fx.createProject();
            fx.sql("CREATE TABLE " + fx.table("pinned")
                    + "(id int PRIMARY KEY, f float8, ts timestamptz, t timestamp, d date)");
            fx.enable("pinned");
            fx.subscribe("pinned", "*", null);
            fx.awaitCaptured("pinned");
            fx.sql("INSERT INTO " + fx.table("pinned")
                    + " VALUES (1, 0.1::float8 + 0.2::float8, '2026-01-02 03:04:05.123456+00', "
                    + "'2026-01-02 03:04:05', '2026-01-02')");
            JsonNode data =
                    fx.await(r -> r.size() == 1, Duration.ofSeconds(10)).get(0).data();
            JsonNode record = data.get("record");
            assertThat(record.get("f").decimalValue()).isEqualByComparingTo(new BigDecimal("0.30000000000000004"));
            assertThat(record.get("ts").asText()).isEqualTo("2026-01-02T03:04:05.123456+00:00");
            assertThat(record.get("t").asText()).isEqualTo("2026-01-02T03:04:05");
            assertThat(record.get("d").asText()).isEqualTo("2026-01-02");
            assertThat(data.get("commit_timestamp").asText()).endsWith("Z");
        } finally {
            fx.stopWorker();
            pg.execute("DROP ROLE " + role);
        }
    }

    @Test
    void aLongOpenTransactionGrowsTheRedecodeGaugeAndIsWarnedAbout() throws Exception {
        fx.startWorker(Map.of("CDC_SOURCE", "poll", "CDC_REDECODE_WARN_BYTES", "2097152"));
        watchedAndBulkTables();
        try (Connection open = pg.connect();
                Statement s = open.createStatement()) {
            open.setAutoCommit(false);
            s.execute("INSERT INTO " + fx.table("bulk") + " VALUES (0, 'held open')");
            fx.sql(
                    "INSERT INTO " + fx.table("bulk")
                            + " SELECT g, repeat(md5(g::text), 32) FROM generate_series(1, 4000) g",
                    "CHECKPOINT");
            Awaitility.await()
                    .atMost(Duration.ofSeconds(20))
                    .until(() -> fx.metric("aura_cdc_slot_redecode_bytes") > 2 * 1024 * 1024);
            Awaitility.await()
                    .atMost(Duration.ofSeconds(10))
                    .until(() -> logs.count(Level.WARN, "a long-open transaction pins it") > 0);
            assertThat(fx.health().get("slot").get("redecode_bytes").asLong()).isGreaterThan(2 * 1024 * 1024);
            open.commit();
        }
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(500))
                .until(() -> {
                    fx.sql("CHECKPOINT");
                    return fx.metric("aura_cdc_slot_redecode_bytes") < 1024 * 1024;
                });
    }
}
