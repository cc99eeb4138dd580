package dev.aura.realtime.e2e.bus;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.ServiceEnv;
import dev.aura.realtime.testkit.ServiceHttp;
import dev.aura.realtime.testkit.ServiceProcess;
import dev.aura.realtime.testkit.Waits;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * Issue 15, "a forced re-publish reaches each client once": a second cdc-worker reads the same
 * database through a slot of its own, so every change is published twice with the same
 * {@code Aura-Event-Id} (commit LSN and ordinal), exactly as when a batch is re-read after a
 * failed flush or by a new leader. ws-front drops the second copy: realtime-js gets each row once.
 */
class RepublishE2EIT {
    private static final int ROWS = 20;

    @Test
    void aRepublishedChangeReachesEachClientOnce() throws Exception {
        try (NatsServer nats = NatsServer.start();
                E2eStack stack = E2eStack.start(PostgresServer.shared(), nats, 1);
                RealtimeJsClient js = RealtimeJsClient.start();
                Connection observer = nats.connect()) {
            String secondSlot =
                    "aura_e2e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
            int secondPort = Ports.forService();
            try (ServiceProcess second = ServiceProcess.startJar(
                    "cdc-worker-2",
                    Jars.cdcWorker(),
                    ServiceEnv.cdcWorker(stack.pg, nats, E2eStack.SECRET, secondSlot, secondPort),
                    List.of())) {
                new ServiceHttp(secondPort).awaitHealth("\"cdc_active\":true", Duration.ofSeconds(60), second);
                stack.createEnabledTable("t", "(id int PRIMARY KEY)");
                js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId), "1.0.0", Map.of());
                js.channel("db");
                js.onPostgresChanges("db", Map.of("event", "INSERT", "schema", "public", "table", "t"));
                js.subscribeAndAwait("db", Duration.ofSeconds(20));

                // row id -> event ids of its published copies
                Map<Integer, List<String>> copies = new ConcurrentHashMap<>();
                Dispatcher d = observer.createDispatcher(msg -> {
                    int id = rowIdOf(msg.getData());
                    copies.computeIfAbsent(id, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
                            .add(msg.getHeaders().getFirst(AuraHeaders.EVENT_ID));
                });
                d.subscribe(Subjects.CHANGES + "." + Subjects.encodeToken(stack.projectId) + ".>");
                observer.flush(Duration.ofSeconds(5));
                // the second worker learns of the enabled table at its next refresh (300 ms in tests)
                AtomicInteger probe = new AtomicInteger(1000);
                Waits.until(
                        "both workers publish the table's changes",
                        Duration.ofSeconds(20),
                        Duration.ofMillis(300),
                        () -> {
                            stack.sql("INSERT INTO " + stack.table("t") + " VALUES (" + probe.incrementAndGet() + ")");
                            return copies.values().stream().anyMatch(c -> c.size() == 2);
                        },
                        copies::toString);
                for (int id = 1; id <= ROWS; id++) {
                    stack.sql("INSERT INTO " + stack.table("t") + " VALUES (" + id + ")");
                }

                Waits.until(
                        "every change published by both workers",
                        Duration.ofSeconds(30),
                        Duration.ofMillis(100),
                        () -> java.util.stream.IntStream.rangeClosed(1, ROWS)
                                .allMatch(
                                        id -> copies.getOrDefault(id, List.of()).size() == 2),
                        copies::toString);
                assertThat(copies.get(1).get(0))
                        .as("both copies carry the same Aura-Event-Id")
                        .isEqualTo(copies.get(1).get(1));
                ServiceHttp front = stack.http(stack.wsPort(0));
                Waits.until(
                        "ws-front dropped every second copy",
                        Duration.ofSeconds(10),
                        Duration.ofMillis(100),
                        () -> front.metric("aura_relay_duplicates_total") >= ROWS,
                        () -> "duplicates dropped: " + front.metric("aura_relay_duplicates_total"));
                Waits.until(
                        "every row at the client",
                        Duration.ofSeconds(10),
                        Duration.ofMillis(100),
                        () -> received(js).size() == ROWS,
                        () -> received(js).toString());
                assertThat(received(js).values())
                        .as("copies of each row at the client")
                        .allMatch(n -> n == 1);
                ServiceHttp cdc = stack.cdcHttp();
                System.out.printf(
                        "re-publish: %d rows published twice, %.0f copies dropped by ws-front; cdc-worker read-your-writes "
                                + "wait %.2f ms per batch (max %.2f ms, %.0f batches) in polls of %.2f ms on average%n",
                        ROWS,
                        front.metric("aura_relay_duplicates_total"),
                        1000
                                * cdc.metric("aura_cdc_registry_sync_seconds_sum")
                                / cdc.metric("aura_cdc_registry_sync_seconds_count"),
                        1000 * cdc.metric("aura_cdc_registry_sync_seconds_max"),
                        cdc.metric("aura_cdc_registry_sync_seconds_count"),
                        1000
                                * cdc.metric("aura_cdc_poll_duration_seconds_sum")
                                / cdc.metric("aura_cdc_poll_duration_seconds_count"));
            } finally {
                dropSlot(stack, secondSlot);
            }
        }
    }

    /** The second worker's slot must not outlive the test on the shared Postgres. */
    private static void dropSlot(E2eStack stack, String slot) {
        Waits.until(
                "slot " + slot + " dropped",
                Duration.ofSeconds(20),
                Duration.ofMillis(200),
                () -> {
                    stack.sql("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"
                            + slot + "' AND NOT active");
                    try (var c = stack.pg.connect();
                            var st = c.createStatement();
                            var rs = st.executeQuery(
                                    "SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
                        return !rs.next();
                    }
                },
                () -> "still there");
    }

    /** Row id to the number of times realtime-js delivered it. */
    private static Map<Integer, Long> received(RealtimeJsClient js) {
        return js.events().stream()
                .filter(e -> "postgres_changes".equals(e.path("type").asText()))
                .map(RepublishE2EIT::rowId)
                .filter(id -> id <= ROWS)
                .collect(Collectors.groupingBy(id -> id, Collectors.counting()));
    }

    private static int rowIdOf(byte[] changeEvent) {
        try {
            return dev.aura.realtime.common.wire.WireJson.mapper()
                    .readTree(changeEvent)
                    .path("data")
                    .path("record")
                    .path("id")
                    .asInt();
        } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int rowId(JsonNode e) {
        return e.path("payload").path("new").path("id").asInt();
    }
}
