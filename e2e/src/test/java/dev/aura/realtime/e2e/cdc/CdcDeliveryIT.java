package dev.aura.realtime.e2e.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.testkit.Waits;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/** docs/design.md C4 with the real jar: at-least-once across kill -9, and a million-row transaction in a 256 MB heap. */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@ValueSource(strings = {"stream", "poll"})
class CdcDeliveryIT {
    @RegisterExtension
    final CdcJar cdc;

    CdcDeliveryIT(String source) {
        this.cdc = CdcJar.onSharedServers(source);
    }

    @Test
    void killNineInTheMiddleOfABatchLosesNothingAndDuplicatesKeepTheirEventId() throws Exception {
        int rows = 30_000;
        cdc.start(List.of());
        cdc.enableTable("t", "(id int PRIMARY KEY)");
        cdc.pg.execute("INSERT INTO " + cdc.table("t") + " SELECT generate_series(1, " + rows + ")");
        cdc.awaitReceived(2_000, Duration.ofSeconds(60));
        cdc.process.kill9();
        int beforeKill = cdc.received();
        assertThat(beforeKill).as("killed in the middle of the batch").isLessThan(rows);

        cdc.start(List.of());
        Map<String, Integer> recordByEventId = new HashMap<>();
        Waits.until(
                rows + " distinct events",
                Duration.ofSeconds(120),
                Duration.ofMillis(200),
                () -> {
                    recordByEventId.clear();
                    synchronized (cdc) {
                        for (int i = 0; i < cdc.eventIds.size(); i++) {
                            Integer previous = recordByEventId.putIfAbsent(cdc.eventIds.get(i), cdc.recordIds.get(i));
                            assertThat(previous == null || previous.equals(cdc.recordIds.get(i)))
                                    .as("a duplicate carries the same event id for the same row")
                                    .isTrue();
                        }
                    }
                    return recordByEventId.size() >= rows;
                },
                () -> recordByEventId.size() + " distinct of " + cdc.received() + " received\n"
                        + cdc.process.logTail(40));
        Set<Integer> distinctRows = new HashSet<>(recordByEventId.values());
        assertThat(recordByEventId).hasSize(rows);
        assertThat(distinctRows).hasSize(rows);
        assertThat(cdc.received() - rows).as("re-published after the restart").isGreaterThanOrEqualTo(beforeKill);
        System.out.printf(
                "kill -9 after %d of %d events; %d received in total, %d distinct event ids%n",
                beforeKill, rows, cdc.received(), recordByEventId.size());
    }

    @Test
    void aMillionRowTransactionStreamsThroughA256MbHeapInCommitOrder() throws Exception {
        int rows = 1_000_000;
        cdc.start(List.of("-Xmx256m", "-XX:+ExitOnOutOfMemoryError"));
        cdc.enableTable("big", "(id int PRIMARY KEY)");
        long t0 = System.nanoTime();
        cdc.pg.execute("INSERT INTO " + cdc.table("big") + " SELECT generate_series(1, " + rows + ")");
        long committed = System.nanoTime();
        AtomicLong peakRss = new AtomicLong();
        Waits.until(
                rows + " events",
                Duration.ofSeconds(600),
                Duration.ofMillis(200),
                () -> {
                    assertThat(cdc.process.isAlive())
                            .as("worker alive (no OOM)")
                            .isTrue();
                    peakRss.accumulateAndGet(rssKb(cdc.process.pid()), Math::max);
                    return cdc.received() >= rows;
                },
                () -> "received " + cdc.received() + "\n" + cdc.process.logTail(40));
        long done = System.nanoTime();
        // a worker that ran out of memory would exit after its last publish: it must stay up a while
        Awaitility.await("the worker alive 500 ms after the last event")
                .during(Duration.ofMillis(500))
                .atMost(Duration.ofSeconds(1))
                .until(cdc.process::isAlive);
        assertThat(Files.readString(cdc.process.logFile())).doesNotContain("java.lang.OutOfMemoryError");
        synchronized (cdc) {
            assertThat(cdc.received()).isEqualTo(rows);
            String commitLsn =
                    cdc.eventIds.get(0).substring(0, cdc.eventIds.get(0).indexOf(':'));
            for (int i = 0; i < rows; i++) {
                if (cdc.recordIds.get(i) != i + 1 || !cdc.eventIds.get(i).equals(commitLsn + ":" + i)) {
                    throw new AssertionError("event " + i + " out of commit order: " + cdc.eventIds.get(i) + " id "
                            + cdc.recordIds.get(i));
                }
            }
        }
        System.out.printf(
                "1,000,000-row transaction: insert %d ms, delivered %d ms after commit, worker peak RSS %d MB%n",
                (committed - t0) / 1_000_000, (done - committed) / 1_000_000, peakRss.get() / 1024);
    }

    private static long rssKb(long pid) {
        try {
            for (String line : Files.readAllLines(java.nio.file.Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (Exception gone) {
            // process exited; the alive check reports it
        }
        return 0;
    }
}
