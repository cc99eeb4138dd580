package dev.aura.realtime.e2e.resume;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.ChangeHistory;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.Waits;
import io.nats.client.Connection;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Issue 38 point 3: a replay is streamed and bounded. Project A's history holds 64 rows of 900 KB
 * (57.6 MB, within the default 64 MiB bound); 8 of its users, away while they were committed,
 * rejoin at once on a ws-front with the chart's heap ({@code -Xmx768m}). Each must get the 64 rows
 * once, in order, and the replica must live; meanwhile project B's live rows (one every 20 ms, to a
 * client on the same replica) must not wait for A's replays beyond a fair share.
 */
class ResumeReplayMemoryE2EIT {
    static final int ROWS = 64;
    static final int CLIENTS = 8;
    static final int ROW_CHARS = 900_000;
    static final Duration T = Duration.ofSeconds(30);

    @Test
    void largeReplaysToEightClientsAtOnceNeitherCrashTheReplicaNorDelayAnotherProject() throws Exception {
        try (NatsServer nats = NatsServer.start();
                E2eStack stack = new E2eStack(PostgresServer.shared(), nats)) {
            // both projects resume with the operator's default window (shipped as 0: design.md R)
            stack.startCdcWorker(Map.of("AURA_RESUME_DEFAULT_SECONDS", "120"), List.of());
            stack.createProject();
            stack.createEnabledTable("big", "(id int PRIMARY KEY, body text)");
            String b = UUID.randomUUID().toString();
            stack.createProject(b);
            stack.createEnabledTable(b, "live", "(id int PRIMARY KEY, sent_ms bigint)");
            int small = stack.startWsFront(Map.of(), List.of("-Xmx768m"));
            int join = stack.startWsFront(Map.of());
            awaitStreams(nats, stack, stack.projectId, b);

            // A's users subscribe on the other replica, then their sockets drop (their channels are parked)
            List<String> tokens = IntStream.range(0, CLIENTS)
                    .mapToObj(i -> stack.tokens.authenticated(
                            stack.projectId, UUID.randomUUID().toString()))
                    .toList();
            for (String token : tokens) {
                try (RawChanges c = new RawChanges(stack.wsUrl(join), stack.tokens.anon(stack.projectId))) {
                    c.join("realtime:big", "big", token);
                    Waits.until("subscribed", T, Duration.ofMillis(50), c::subscribed, () -> c.system.toString());
                }
            }
            Thread.sleep(500);
            for (int id = 1; id <= ROWS; id++) {
                stack.sql("INSERT INTO " + stack.table("big") + " VALUES (" + id + ", repeat('x', " + ROW_CHARS + "))");
            }
            awaitStored(nats, stack.projectId, ROWS);

            // B's client on the small replica, live rows every 20 ms: a baseline, then during A's replays
            try (RawChanges live = new RawChanges(stack.wsUrl(small), stack.tokens.anon(b));
                    RowWriter writer = new RowWriter(
                            stack.pg,
                            id -> "INSERT INTO " + stack.table(b, "live") + " VALUES (" + id
                                    + ", (extract(epoch FROM clock_timestamp()) * 1000)::bigint)",
                            ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
                live.join("realtime:live", "live", stack.tokens.anon(b));
                Waits.until("B subscribed", T, Duration.ofMillis(50), live::subscribed, () -> live.system.toString());
                writer.awaitMore(150); // 3 s
                int baselineCount = live.changes.size();

                List<RawChanges> clients = new ArrayList<>();
                long started = System.nanoTime();
                try {
                    for (String token : tokens) {
                        RawChanges c = new RawChanges(stack.wsUrl(small), stack.tokens.anon(stack.projectId));
                        clients.add(c);
                        c.join("realtime:big", "big", token);
                    }
                    Waits.until(
                            "64 rows at each of the 8 clients",
                            Duration.ofSeconds(120),
                            Duration.ofMillis(200),
                            () -> clients.stream().allMatch(c -> c.changes.size() >= ROWS || c.closed()),
                            () -> describe(clients) + "\n"
                                    + stack.wsFront(small).logTail(30));
                    long replayedMs = RawChanges.since(started).toMillis();
                    int duringTo = live.changes.size();
                    writer.awaitMore(50);
                    writer.stop();

                    List<RawChanges.Change> baseline = live.changes.subList(0, baselineCount);
                    List<RawChanges.Change> during = live.changes.subList(baselineCount, duringTo);
                    String report = String.format(
                            "8 replays of %d rows (%.1f MB each) in %d ms; ws-front peak RSS %s; B's live rows:"
                                    + " baseline p50 %d ms p99 %d ms max %d ms (%d rows), during the replays p50 %d ms"
                                    + " p99 %d ms max %d ms (%d rows); clients: %s",
                            ROWS,
                            ROWS * (double) ROW_CHARS / 1e6,
                            replayedMs,
                            peakRss(stack, small),
                            percentile(baseline, 50),
                            percentile(baseline, 99),
                            percentile(baseline, 100),
                            baseline.size(),
                            percentile(during, 50),
                            percentile(during, 99),
                            percentile(during, 100),
                            during.size(),
                            describe(clients));
                    System.out.println(report);
                    StringBuilder timeline = new StringBuilder("B's delays during the replays (ms, every 10th):");
                    for (int i = 0; i < during.size(); i += 10) {
                        RawChanges.Change c = during.get(i);
                        timeline.append(' ').append(c.arrivedMs() - c.sentMs());
                    }
                    System.out.println(timeline);
                    assertThat(stack.wsFront(small).isAlive())
                            .as("the 768 MiB replica lives\n" + report + "\n"
                                    + stack.wsFront(small).logTail(40))
                            .isTrue();
                    List<Integer> all = IntStream.rangeClosed(1, ROWS).boxed().toList();
                    for (RawChanges c : clients) {
                        assertThat(c.ids())
                                .as("each row once, in order\n" + report)
                                .isEqualTo(all);
                        assertThat(c.notPossible()).as(report).isEmpty();
                    }
                    assertThat(percentile(during, 99))
                            .as("B's live rows wait for A's replays no more than a second beyond the baseline\n"
                                    + report)
                            .isLessThanOrEqualTo(percentile(baseline, 99) + 1_000);
                } finally {
                    clients.forEach(RawChanges::close);
                }
            }
        }
    }

    private static void awaitStreams(NatsServer nats, E2eStack stack, String... projects) {
        Waits.until(
                "the history streams",
                T,
                Duration.ofMillis(200),
                () -> {
                    try (Connection c = nats.connect()) {
                        List<String> names = c.jetStreamManagement().getStreamNames();
                        for (String p : projects) {
                            if (!names.contains(ChangeHistory.streamName(p))) {
                                return false;
                            }
                        }
                        return true;
                    }
                },
                () -> stack.cdcWorker().logTail(20));
    }

    private static void awaitStored(NatsServer nats, String project, int n) {
        Waits.until(
                n + " changes in the history",
                Duration.ofSeconds(60),
                Duration.ofMillis(200),
                () -> {
                    try (Connection c = nats.connect()) {
                        return c.jetStreamManagement()
                                        .getStreamInfo(ChangeHistory.streamName(project))
                                        .getStreamState()
                                        .getMsgCount()
                                >= n;
                    }
                },
                () -> "");
    }

    private static String describe(List<RawChanges> clients) {
        return clients.stream()
                .map(c -> c.changes.size() + (c.closed() ? " (closed)" : "") + c.notPossible())
                .toList()
                .toString();
    }

    /** The p-th percentile of delivery delays (arrival - sent_ms), in ms; 0 for none. */
    static long percentile(List<RawChanges.Change> changes, int p) {
        long[] delays = changes.stream()
                .mapToLong(c -> c.arrivedMs() - c.sentMs())
                .sorted()
                .toArray();
        if (delays.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(p / 100.0 * delays.length) - 1;
        return delays[Math.max(0, Math.min(delays.length - 1, i))];
    }

    /** The replica's peak resident set ({@code VmHWM}), or "unknown". */
    private static String peakRss(E2eStack stack, int replica) {
        try {
            for (String line :
                    Files.readAllLines(Path.of("/proc/" + stack.wsFront(replica).pid() + "/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return line.substring("VmHWM:".length()).trim();
                }
            }
        } catch (Exception e) {
            return "unknown (" + e.getMessage() + ")";
        }
        return "unknown";
    }
}
