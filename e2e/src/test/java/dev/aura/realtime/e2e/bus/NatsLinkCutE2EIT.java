package dev.aura.realtime.e2e.bus;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.e2e.faults.SteadyWriter;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PartitionableProxy;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, "no silent loss": ws-front's own link to NATS is cut for 5 s (a proxy resets it and
 * refuses reconnects) while a row is committed every 100 ms. Changes published meanwhile cannot
 * reach that replica, so its realtime-js client must be told: a postgres_changes {@code system}
 * error when the link drops, {@code ok} once it is back, and every row committed after that
 * {@code ok} arrives. Every row arrives or the client was told.
 */
class NatsLinkCutE2EIT {

    @Test
    void everyRowArrivesOrTheClientWasTold() throws Exception {
        try (NatsServer nats = NatsServer.start();
                PartitionableProxy link = new PartitionableProxy(nats.port());
                E2eStack stack = new E2eStack(PostgresServer.shared(), nats);
                RealtimeJsClient js = RealtimeJsClient.start()) {
            stack.startCdcWorker(Map.of(), List.of());
            stack.startWsFront(Map.of("NATS_URL", "nats://127.0.0.1:" + link.port()));
            stack.createProject();
            stack.createEnabledTable("t", "(id int PRIMARY KEY)");
            js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId), "2.0.0", Map.of());
            js.channel("db");
            js.onPostgresChanges("db", Map.of("event", "INSERT", "schema", "public", "table", "t"));
            js.onSystem("db");
            js.subscribeAndAwait("db", Duration.ofSeconds(20));
            js.awaitEvent(NatsLinkCutE2EIT::isOk, Duration.ofSeconds(15));

            try (SteadyWriter writer = new SteadyWriter(stack.pg, stack.table("t"), 10)) {
                awaitCommitted(writer, 10);
                int beforeCut = js.eventCount();
                link.cut();
                JsonNode told = js.awaitEvent(beforeCut, NatsLinkCutE2EIT::isError, Duration.ofSeconds(5));
                long cutAt = System.nanoTime();
                awaitCommitted(writer, writer.committed().size() + 50); // 5 s of rows while cut
                link.heal();
                int afterHeal = js.eventCount();
                js.awaitEvent(afterHeal, NatsLinkCutE2EIT::isOk, Duration.ofSeconds(30));
                long okMs = (System.nanoTime() - cutAt) / 1_000_000;
                Set<Integer> beforeOk = Set.copyOf(writer.committed());
                awaitCommitted(writer, writer.committed().size() + 20);
                Set<Integer> committed = writer.stop();

                Set<Integer> afterOk = new TreeSet<>(committed);
                afterOk.removeAll(beforeOk);
                awaitDelivered(js, afterOk, stack);
                Set<Integer> missing = new TreeSet<>(committed);
                missing.removeAll(insertedIds(js));
                System.out.printf(
                        "link cut ~5 s: %d rows committed, %d never reached the client (told: \"%s\"), ok %d ms after the cut, "
                                + "all %d rows committed after the ok delivered%n",
                        committed.size(),
                        missing.size(),
                        told.path("payload").path("message").asText(),
                        okMs,
                        afterOk.size());
                assertThat(missing)
                        .as("only rows committed between the error and the ok may be missing")
                        .allMatch(beforeOk::contains);
                assertThat(told.path("payload").path("message").asText()).contains("RealtimeLinkLost");
            }
            assertThat(js.events())
                    .as("the client's socket stayed open")
                    .noneMatch(e -> "socket".equals(e.path("type").asText())
                            && "close".equals(e.path("event").asText()));
        }
    }

    private static boolean isSystem(JsonNode e, String status) {
        return "system".equals(e.path("type").asText())
                && status.equals(e.path("payload").path("status").asText());
    }

    private static boolean isOk(JsonNode e) {
        return isSystem(e, "ok") && e.path("payload").path("message").asText().contains("PostgreSQL");
    }

    private static boolean isError(JsonNode e) {
        return isSystem(e, "error");
    }

    private static Set<Integer> insertedIds(RealtimeJsClient js) {
        Set<Integer> ids = new TreeSet<>();
        for (JsonNode e : js.events()) {
            if ("postgres_changes".equals(e.path("type").asText())) {
                ids.add(e.path("payload").path("new").path("id").asInt());
            }
        }
        return ids;
    }

    private static void awaitDelivered(RealtimeJsClient js, Set<Integer> expected, E2eStack stack) {
        Set<Integer> missing = new TreeSet<>(expected);
        Waits.until(
                "every row committed after the ok at the client",
                Duration.ofSeconds(30),
                Duration.ofMillis(100),
                () -> {
                    missing.removeAll(insertedIds(js));
                    return missing.isEmpty();
                },
                () -> missing + " never arrived\nws-front:\n" + stack.wsFront(0).logTail(30));
    }

    private static void awaitCommitted(SteadyWriter writer, int count) {
        Waits.until(
                count + " rows committed",
                Duration.ofSeconds(30),
                Duration.ofMillis(20),
                () -> writer.committed().size() >= count,
                () -> writer.committed().size() + " committed");
    }
}
