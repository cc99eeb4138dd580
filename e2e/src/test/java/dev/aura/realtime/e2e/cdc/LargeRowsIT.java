package dev.aura.realtime.e2e.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.RegistryEntries;
import dev.aura.realtime.testkit.Waits;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 15 item 3, docs/design.md C6/C7: the worker's memory is bounded in bytes, not rows. One
 * transaction of 600 rows of 2 MB each (1.2 GB of wal2json text) passes a worker with a 256 MB
 * heap, with both sources: every row arrives as an {@code Error 413} event keeping its key, the
 * worker stays up, and another project's row committed after it arrives too.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@ValueSource(strings = {"stream", "poll"})
class LargeRowsIT {
    private static final int ROWS = 600;
    private static final int ROW_BYTES = 2 * 1024 * 1024;

    @RegisterExtension
    final CdcJar cdc;

    private final ObjectMapper json = WireJson.mapper();

    LargeRowsIT(String source) {
        this.cdc = CdcJar.onSharedServers(source);
    }

    @Test
    void sixHundredTwoMegabyteRowsInOneTransactionPassA256MbWorkerAndAnotherProjectsNextRowArrives() throws Exception {
        cdc.start(List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError"));
        cdc.enableTable("big", "(id int PRIMARY KEY, body text)");
        String other = UUID.randomUUID().toString();
        String otherSchema = "project_" + other.replace('-', '_');
        AtomicInteger tooLarge = new AtomicInteger();
        Set<Integer> otherRows = ConcurrentHashMap.newKeySet();
        try (Connection nats = cdc.natsServer.connect()) {
            Dispatcher d = nats.createDispatcher(msg -> {
                try {
                    JsonNode data = json.readTree(msg.getData()).path("data");
                    if (msg.getSubject().contains(Subjects.encodeToken(other))) {
                        otherRows.add(data.path("record").path("id").asInt());
                    } else if (data.path("errors").toString().contains("Error 413: Payload Too Large")
                            && !data.path("record").has("body")) {
                        tooLarge.incrementAndGet();
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            d.subscribe(Subjects.CHANGES + ".>");
            cdc.pg.execute(
                    "CREATE SCHEMA \"" + otherSchema + "\"",
                    "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + other + "', '"
                            + otherSchema + "')",
                    "CREATE TABLE \"" + otherSchema + "\".t (id int PRIMARY KEY)",
                    "INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + other + "', 't')");
            RegistryEntries.put(
                    nats, RegistryEntries.binding(other, "t", RegistryEntries.claims("service_role", other), "e2e"));
            // the other project is captured (the worker refreshes its table list every 300 ms)
            AtomicInteger probe = new AtomicInteger();
            Waits.until(
                    "the other project's probe row",
                    Duration.ofSeconds(30),
                    Duration.ofMillis(300),
                    () -> {
                        if (!otherRows.isEmpty()) {
                            return true;
                        }
                        cdc.pg.execute(
                                "INSERT INTO \"" + otherSchema + "\".t VALUES (" + -probe.incrementAndGet() + ")");
                        return false;
                    },
                    () -> cdc.process.logTail(30));

            long t0 = System.nanoTime();
            // 2 MB of text per row (compressible, so the test writes little WAL; wal2json prints it whole)
            cdc.pg.execute("INSERT INTO " + cdc.table("big") + " SELECT g, repeat(md5(g::text), " + ROW_BYTES / 32
                    + ") FROM generate_series(1, " + ROWS + ") g");
            cdc.pg.execute("INSERT INTO \"" + otherSchema + "\".t VALUES (1)");

            Waits.until(
                    "the other project's row committed after the big transaction",
                    Duration.ofSeconds(300),
                    Duration.ofMillis(200),
                    () -> {
                        assertThat(cdc.process.isAlive())
                                .as("worker alive (no OOM)")
                                .isTrue();
                        return otherRows.contains(1);
                    },
                    () -> "413 events " + tooLarge.get() + "/" + ROWS + "\n" + cdc.process.logTail(30));
            cdc.awaitReceived(ROWS, Duration.ofSeconds(30));
            assertThat(tooLarge.get())
                    .as("every big row as a 413 event without its body")
                    .isEqualTo(ROWS);
            synchronized (cdc) {
                assertThat(Set.copyOf(cdc.recordIds))
                        .as("each row's key survives")
                        .hasSize(ROWS);
            }
            assertThat(cdc.process.isAlive()).isTrue();
            assertThat(Files.readString(cdc.process.logFile())).doesNotContain("java.lang.OutOfMemoryError");
            System.out.printf(
                    "%s: %d rows of 2 MB in one transaction through -Xmx256m in %d ms, all 413, other project's row after%n",
                    cdc.source, ROWS, (System.nanoTime() - t0) / 1_000_000);
        }
    }
}
