package dev.aura.realtime.e2e.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.e2e.faults.SteadyWriter;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 9, "Postgres restarted / connection killed": the worker's sessions are terminated
 * ({@code pg_terminate_backend} on application names {@code aura-cdc-worker} and
 * {@code aura-cdc-worker-pool}), and Postgres itself is restarted, while rows are committed at a
 * steady rate. {@code /health} reports {@code cdc_active: false} with a reason, then true again
 * without a restart of the worker, and every committed row reaches the NATS subscriber.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@ValueSource(strings = {"stream", "poll"})
class PostgresFaultsIT {
    @Parameter
    String source;

    @Test
    void terminatedSessionsAreReplacedAndNothingIsLost() throws Exception {
        try (CdcJar cdc = new CdcJar(PostgresServer.shared(), NatsServer.shared(), source)) {
            cdc.start(List.of());
            cdc.enableTable("t", "(id int PRIMARY KEY)");
            SteadyWriter writer = new SteadyWriter(cdc.pg, cdc.table("t"), 200);
            cdc.awaitReceived(200, Duration.ofSeconds(30));
            for (int round = 0; round < 3; round++) {
                cdc.pg.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                                + " WHERE application_name IN ('aura-cdc-worker', 'aura-cdc-worker-pool') AND pid <> pg_backend_pid()");
                Thread.sleep(200); // three separate rounds
            }
            String inactive = cdc.process.waitForLog(
                    Pattern.compile("\\[CdcNotActive\\] postgres_unavailable: "), Duration.ofSeconds(10));
            cdc.awaitHealth(true, Duration.ofSeconds(30));
            cdc.awaitReceived(cdc.received() + 200, Duration.ofSeconds(30));
            cdc.awaitDelivered(writer.stop(), Duration.ofSeconds(60), "after pg_terminate_backend");
            System.out.println("after pg_terminate_backend: " + inactive.substring(inactive.indexOf("[CdcNotActive]")));
        }
    }

    @Test
    void aPostgresRestartMakesCdcInactiveWithAReasonThenActiveAndNothingIsLost() throws Exception {
        try (PostgresServer pg = PostgresServer.start();
                CdcJar cdc = new CdcJar(pg, NatsServer.shared(), source)) {
            cdc.start(List.of());
            cdc.enableTable("t", "(id int PRIMARY KEY)");
            SteadyWriter writer = new SteadyWriter(pg, cdc.table("t"), 200);
            cdc.awaitReceived(200, Duration.ofSeconds(30));
            long t0 = System.nanoTime();
            // /health is sampled on another thread while Postgres restarts: the inactive spell can be
            // shorter than the restart call itself
            CompletableFuture<JsonNode> inactive = CompletableFuture.supplyAsync(() -> Awaitility.await()
                    .atMost(Duration.ofSeconds(30))
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(20))
                    .until(
                            cdc::health,
                            h -> !h.isMissingNode() && !h.path("cdc_active").asBoolean()));
            pg.stop(); // fast shutdown: sessions are terminated
            Thread.sleep(1_000); // Postgres stays down for a second
            pg.restart();
            JsonNode down;
            try {
                down = inactive.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                throw new AssertionError("cdc_active never false during the restart\n" + cdc.process.logTail(20), e);
            }
            assertThat(down.path("reason").asText())
                    .as("a reason while inactive")
                    .isNotBlank();
            cdc.awaitHealth(true, Duration.ofSeconds(60));
            long recoveredMs = (System.nanoTime() - t0) / 1_000_000;
            cdc.awaitReceived(cdc.received() + 200, Duration.ofSeconds(30));
            Set<Integer> committed = writer.stop();
            cdc.awaitDelivered(committed, Duration.ofSeconds(60), "after a Postgres restart");
            System.out.printf(
                    "Postgres restart: inactive with reason '%s', active again %d ms after the restart began; "
                            + "%d rows, writer retries %d%n",
                    down.path("reason").asText(), recoveredMs, committed.size(), writer.failures());
        }
    }
}
