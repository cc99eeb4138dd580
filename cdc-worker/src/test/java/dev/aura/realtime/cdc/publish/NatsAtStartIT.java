package dev.aura.realtime.cdc.publish;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.CdcFixture;
import dev.aura.realtime.cdc.CdcWorker;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * C10: a worker started while NATS is down answers {@code /health} with {@code nats_unavailable},
 * stops at once when asked (SIGTERM runs {@link CdcWorker#close()}), and comes up on its own once
 * NATS does. Before, start() waited for NATS holding the worker's monitor and close() hung on it.
 */
class NatsAtStartIT {
    /** Not a latency target: "returns at all" (a hang lasts until NATS comes back). */
    private static final Duration NO_HANG = Duration.ofSeconds(20);

    private NatsServer nats;
    private CdcFixture fx;

    @AfterEach
    void tearDown() throws Exception {
        if (fx != null) {
            fx.close();
        }
        if (nats != null) {
            nats.close();
        }
    }

    @Test
    void aWorkerStartedBeforeNatsSaysSoStopsWhenAskedAndComesUpWithNats() throws Exception {
        nats = NatsServer.start();
        fx = new CdcFixture(PostgresServer.shared(), nats);
        nats.stop();

        CdcWorker first = assertTimeoutPreemptively(NO_HANG, () -> fx.startWorkerInactive(Map.of()));
        JsonNode health = fx.awaitReason("nats_unavailable", Duration.ofSeconds(20));
        assertThat(health.get("cdc_active").asBoolean()).isFalse();
        assertTimeoutPreemptively(NO_HANG, first::close);

        fx.startWorkerInactive(Map.of());
        fx.awaitReason("nats_unavailable", Duration.ofSeconds(20));
        nats.restart();
        Awaitility.await()
                .atMost(Duration.ofSeconds(60))
                .until(() -> fx.worker().state().snapshot().active());
        fx.createProject();
        fx.sql("CREATE TABLE " + fx.table("m") + "(id int PRIMARY KEY)");
        fx.enable("m");
        fx.subscribe("m", "*", null);
        fx.awaitCaptured("m");
        fx.sql("INSERT INTO " + fx.table("m") + " VALUES (1)");
        fx.await(r -> r.size() == 1, Duration.ofSeconds(15));
    }
}
