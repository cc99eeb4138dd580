package dev.aura.realtime.cdc.publish;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.CdcFixture;
import dev.aura.realtime.cdc.CdcSources;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/** C10, C11: no advance without NATS, nothing lost across a NATS outage; /health and /metrics contents. */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@EnumSource(CdcSource.class)
class PublishingIT {
    @Parameter
    CdcSource source;

    private NatsServer nats;
    private CdcFixture fx;

    @BeforeEach
    void setUp() throws Exception {
        nats = NatsServer.start();
        fx = new CdcFixture(PostgresServer.shared(), nats);
        fx.startWorker(CdcSources.env(source));
        fx.createProject();
        fx.sql("CREATE TABLE " + fx.table("m") + "(id int PRIMARY KEY)");
        fx.enable("m");
        fx.subscribe("m", "*", null);
        fx.awaitCaptured("m");
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.close();
        nats.close();
    }

    @Test
    void whileNatsIsDownTheSlotStaysAndEverythingCommittedMeanwhileArrivesAfterwards() throws Exception {
        fx.sql("INSERT INTO " + fx.table("m") + " VALUES (0)");
        fx.await(r -> r.size() == 1, Duration.ofSeconds(10));
        String flushed = fx.queryOne("SELECT pg_current_wal_flush_lsn()::text");
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> "true"
                        .equals(fx.queryOne("SELECT (confirmed_flush_lsn >= '" + flushed
                                + "')::text FROM pg_replication_slots WHERE slot_name = '" + fx.slot + "'")));

        nats.stop();
        String confirmedAtStop = fx.slotColumn("confirmed_flush_lsn");
        fx.sql("INSERT INTO " + fx.table("m") + " SELECT generate_series(1, 100)");
        JsonNode health = fx.awaitReason("nats_unavailable", Duration.ofSeconds(20));
        assertThat(health.get("cdc_active").asBoolean()).isFalse();
        double failures = fx.metric("aura_cdc_publish_failures_total");
        Awaitility.await() // another batch tried and failed while NATS is down
                .atMost(Duration.ofSeconds(15))
                .until(() -> fx.metric("aura_cdc_publish_failures_total") > failures);
        assertThat(fx.slotColumn("confirmed_flush_lsn"))
                .as("not advanced while NATS is down")
                .isEqualTo(confirmedAtStop);
        assertThat(fx.metric("aura_cdc_publish_failures_total")).isPositive();

        nats.restart();
        fx.await(r -> ids(r).containsAll(IntStream.rangeClosed(0, 100).boxed().toList()), Duration.ofSeconds(30));
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(() -> fx.health().get("cdc_active").asBoolean());
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> !fx.slotColumn("confirmed_flush_lsn").equals(confirmedAtStop));
    }

    private static Set<Integer> ids(java.util.List<CdcFixture.Received> received) {
        return received.stream()
                .map(r -> r.data().get("record").get("id").asInt())
                .collect(Collectors.toSet());
    }

    @Test
    void healthAndMetricsExposeWhatOperatorsWatch() throws Exception {
        fx.sql("INSERT INTO " + fx.table("m") + " VALUES (1)");
        fx.await(r -> r.size() == 1, Duration.ofSeconds(10));
        Awaitility.await() // slot inspections (every 2 s) and polls after the event
                .atMost(Duration.ofSeconds(10))
                .until(() -> fx.metric("aura_cdc_polls_total") > 5
                        && fx.health().path("slot").path("confirmed_flush_lsn").isTextual());

        JsonNode h = fx.health();
        assertThat(h.get("cdc_active").asBoolean()).isTrue();
        assertThat(h.get("leader").asBoolean()).isTrue();
        assertThat(h.has("reason")).isTrue();
        assertThat(h.get("reason").isNull()).isTrue();
        JsonNode slot = h.get("slot");
        assertThat(slot.get("name").asText()).isEqualTo(fx.slot);
        assertThat(slot.get("wal_status").asText()).isEqualTo("reserved");
        assertThat(slot.get("safe_wal_size").isIntegralNumber()).isTrue();
        assertThat(slot.get("confirmed_flush_lsn").asText()).matches("[0-9A-F]+/[0-9A-F]+");
        assertThat(slot.get("lag_bytes").isIntegralNumber()).isTrue();
        assertThat(slot.get("redecode_bytes").isIntegralNumber()).isTrue();

        String metrics = fx.metrics();
        assertThat(metrics)
                .contains(
                        "aura_cdc_events_published_total 1.0",
                        "aura_cdc_polls_total ",
                        "aura_cdc_poll_duration_seconds_count ",
                        "aura_cdc_poll_duration_seconds_sum ",
                        "aura_cdc_batch_rows_count ",
                        "aura_cdc_batch_rows_sum ",
                        "aura_cdc_slot_lag_bytes ",
                        "aura_cdc_slot_redecode_bytes ",
                        "aura_cdc_slot_retained_bytes ",
                        "aura_cdc_slot_safe_wal_size_bytes ",
                        "aura_cdc_slot_recreations_total 0.0",
                        "aura_cdc_publish_failures_total 0.0",
                        "aura_cdc_active 1.0");
        assertThat(fx.metric("aura_cdc_polls_total")).isGreaterThan(5);
        assertThat(fx.metric("aura_cdc_batch_rows_sum")).isGreaterThanOrEqualTo(3); // B, I, C
    }
}
