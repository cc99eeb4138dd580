package dev.aura.realtime.e2e.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.e2e.faults.SteadyWriter;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 9, "Postgres restarted / connection killed": the worker's sessions are terminated
 * ({@code pg_terminate_backend} on application names {@code aura-cdc-worker} and
 * {@code aura-cdc-worker-pool}), and Postgres itself is restarted, while rows are committed at a
 * steady rate. {@code /health} reports {@code cdc_active: false} with a reason, then true again
 * without a restart of the worker, and every committed row reaches the NATS subscriber.
 */
class PostgresFaultsIT {

    @Test
    void terminatedSessionsAreReplacedAndNothingIsLost() throws Exception {
        try (CdcJar cdc = new CdcJar(PostgresServer.shared(), NatsServer.shared())) {
            cdc.start(List.of());
            cdc.enableTable("t", "(id int PRIMARY KEY)");
            SteadyWriter writer = new SteadyWriter(cdc.pg, cdc.table("t"), 200);
            awaitReceived(cdc, 200);
            for (int round = 0; round < 3; round++) {
                cdc.pg.execute(
                        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                                + " WHERE application_name IN ('aura-cdc-worker', 'aura-cdc-worker-pool') AND pid <> pg_backend_pid()");
                CdcJar.sleep(200);
            }
            String inactive = cdc.process.waitForLog(
                    Pattern.compile("cdc not active: postgres_unavailable: "), Duration.ofSeconds(10));
            awaitHealth(cdc, true, Duration.ofSeconds(30));
            awaitReceived(cdc, cdc.received() + 200);
            assertAllDelivered(cdc, writer.stop());
            System.out.println("after pg_terminate_backend: " + inactive.substring(inactive.indexOf("cdc not active")));
        }
    }

    @Test
    void aPostgresRestartMakesCdcInactiveWithAReasonThenActiveAndNothingIsLost() throws Exception {
        try (PostgresServer pg = PostgresServer.start();
                CdcJar cdc = new CdcJar(pg, NatsServer.shared())) {
            cdc.start(List.of());
            cdc.enableTable("t", "(id int PRIMARY KEY)");
            SteadyWriter writer = new SteadyWriter(pg, cdc.table("t"), 200);
            awaitReceived(cdc, 200);
            long t0 = System.nanoTime();
            // /health is sampled on another thread while Postgres restarts: the inactive spell can be
            // shorter than the restart call itself
            java.util.concurrent.atomic.AtomicReference<JsonNode> down =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread sampler = Thread.ofPlatform().daemon().start(() -> {
                while (down.get() == null && !Thread.currentThread().isInterrupted()) {
                    try {
                        JsonNode h = cdc.health();
                        if (!h.path("cdc_active").asBoolean()) {
                            down.set(h);
                        }
                    } catch (Exception unreachable) {
                        // keep sampling
                    }
                    CdcJar.sleep(20);
                }
            });
            pg.stop(); // fast shutdown: sessions are terminated
            CdcJar.sleep(1_000);
            pg.restart();
            long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (down.get() == null && System.nanoTime() < deadline) {
                CdcJar.sleep(20);
            }
            sampler.interrupt();
            assertThat(down.get())
                    .as("cdc_active false during the restart\n" + cdc.process.logTail(20))
                    .isNotNull();
            assertThat(down.get().path("reason").asText())
                    .as("a reason while inactive")
                    .isNotBlank();
            awaitHealth(cdc, true, Duration.ofSeconds(60));
            long recoveredMs = (System.nanoTime() - t0) / 1_000_000;
            awaitReceived(cdc, cdc.received() + 200);
            Set<Integer> committed = writer.stop();
            assertAllDelivered(cdc, committed);
            System.out.printf(
                    "Postgres restart: inactive with reason '%s', active again %d ms after the restart began; "
                            + "%d rows, writer retries %d%n",
                    down.get().path("reason").asText(), recoveredMs, committed.size(), writer.failures());
        }
    }

    private static JsonNode awaitHealth(CdcJar cdc, boolean active, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonNode last = null;
        while (System.nanoTime() < deadline) {
            try {
                last = cdc.health();
                if (last.path("cdc_active").asBoolean() == active) {
                    return last;
                }
            } catch (Exception unreachable) {
                // keep polling
            }
            CdcJar.sleep(25);
        }
        throw new AssertionError(
                "cdc_active never became " + active + "; last /health " + last + "\n" + cdc.process.logTail(30));
    }

    private static void awaitReceived(CdcJar cdc, int count) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (cdc.received() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        "received " + cdc.received() + " of " + count + "\n" + cdc.process.logTail(40));
            }
            CdcJar.sleep(20);
        }
    }

    private static void assertAllDelivered(CdcJar cdc, Set<Integer> committed) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        Set<Integer> missing = new TreeSet<>(committed);
        while (!missing.isEmpty() && System.nanoTime() < deadline) {
            synchronized (cdc) {
                missing.removeAll(cdc.recordIds);
            }
            CdcJar.sleep(100);
        }
        assertThat(missing)
                .as("committed rows never delivered\n" + cdc.process.logTail(30))
                .isEmpty();
    }
}
