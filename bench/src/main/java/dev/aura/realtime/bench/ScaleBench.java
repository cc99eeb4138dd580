package dev.aura.realtime.bench;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Figure 4c (issue 19): {@code n} idle WebSocket connections joined to one channel of one
 * ws-front (100,000 in the full run). Heap per connection after a full GC, measured like figure
 * 4a; then single broadcasts from one more connection to all of them, each timed from the send to
 * every receipt (one clock: sender and receivers are this JVM). Clients bind to several loopback
 * addresses ({@link LoopbackSources}); when the open files limit cannot hold {@code n} sockets the
 * figure runs with fewer and says so.
 */
final class ScaleBench {
    /** Issue 19's target: 5 KiB of heap per joined connection at 100,000, one broadcast reaching all. */
    static final Target TARGET = Target.of(
            Target.atMost("per", "heap per connection", 5 * 1024, "B"),
            Target.atLeast("connections", "connections", 100_000, ""),
            Target.atMost("missed", "clients a broadcast missed", 0, ""));

    private static final byte[] MARK = "\"scale\"".getBytes(StandardCharsets.US_ASCII);
    private static final int ROUNDS = 3;

    private ScaleBench() {}

    static void run(Stack s, Report report, long frontPid, int wanted) throws Exception {
        int n = LoopbackSources.capToOpenFiles(wanted);
        if (n < wanted) {
            report.note("4c: capped from " + wanted + " to " + n + " connections: the open files limit is "
                    + LoopbackSources.openFilesLimit()
                    + " per process (ws-front and this load generator each hold one descriptor per socket); "
                    + "raise it with `ulimit -n` (above the hard limit only with CAP_SYS_RESOURCE, e.g. a "
                    + "container started with `--ulimit nofile=262144`)");
        }
        long[] receivedAt = new long[n];
        AtomicLong received = new AtomicLong();
        MessageCheck check = new MessageCheck();
        long before = Procs.heapUsedAfterGc(frontPid);
        try (WsClients clients = new WsClients(1)) {
            long t0 = System.nanoTime();
            List<WsClients.Conn> conns = clients.connectMany(s.wsUri("1.0.0"), n + 1, 500, (c, text) -> {
                if (c.index < n && check.isOurs(text)) {
                    receivedAt[c.index] = System.nanoTime();
                    received.incrementAndGet();
                }
            });
            clients.joinAll(conns, "realtime:scale", WsClients.broadcastConfig(), 500);
            double setupSeconds = (System.nanoTime() - t0) / 1e9;
            Procs.sleep(2000); // let the server settle after the joins before the GC
            long after = Procs.heapUsedAfterGc(frontPid);
            double perConn = (after - before) / (double) (n + 1);
            // what the connections hold, for the analysis (jcmd's class histogram of live objects)
            java.nio.file.Files.writeString(
                    s.runDir.resolve("ws-front-histogram-" + n + ".txt"),
                    Procs.run(List.of(Procs.JDK + "jcmd", Long.toString(frontPid), "GC.class_histogram")));
            WsClients.Conn sender = conns.get(n); // self: false, so it receives nothing
            StringBuilder rounds = new StringBuilder();
            double worstP99 = 0;
            long worstMissing = 0;
            for (int round = 0; round <= ROUNDS; round++) { // round 0 warms up
                Arrays.fill(receivedAt, 0);
                received.set(0);
                long sentAt = System.nanoTime();
                sender.send("{\"topic\":\"realtime:scale\",\"event\":\"broadcast\",\"payload\":{\"type\":\"broadcast\","
                        + "\"event\":\"scale\",\"payload\":{\"round\":" + round + "}},\"ref\":\"" + (100 + round)
                        + "\",\"join_ref\":\"1\"}");
                Progress.await(received::get, n, Duration.ofSeconds(10), Duration.ofMinutes(2));
                Stats stats = new Stats();
                long last = 0;
                for (long at : receivedAt) {
                    if (at != 0) {
                        stats.add((at - sentAt) / 1000);
                        last = Math.max(last, at - sentAt);
                    }
                }
                if (round == 0) {
                    continue;
                }
                worstP99 = Math.max(worstP99, stats.percentileMs(99));
                worstMissing = Math.max(worstMissing, n - received.get());
                rounds.append(rounds.length() == 0 ? "" : "; ")
                        .append(String.format(
                                "p50 %.0f / p99 %.0f / last %.0f ms (%d/%d)",
                                stats.percentileMs(50), stats.percentileMs(99), last / 1e6, received.get(), n));
                Procs.sleep(1000);
            }
            report.row(
                    "4c. " + n + " idle joined WS connections on one ws-front, one broadcast to all (×" + ROUNDS + ")",
                    Report.f0(perConn) + " B/connection (heap " + (before >> 20) + " → " + (after >> 20)
                            + " MB after full GC); broadcast to all: " + rounds,
                    "– (no baseline: an absolute budget per connection; one run, memory figures are not timed rounds)",
                    "–",
                    TARGET,
                    TARGET.judgeOnce(java.util.Map.of(
                            "per", perConn, "connections", (double) n, "missed", (double) worstMissing)));
            report.note(String.format(
                    "4c: %d connections opened and joined in %.1f s (%.0f/s); the slowest broadcast's p99 was %.0f ms",
                    n + 1, setupSeconds, (n + 1) / setupSeconds, worstP99));
            int unexpected = clients.closedUnexpectedly.get();
            if (unexpected > 0) {
                report.note("4c: " + unexpected + " connections were closed by the server during the run");
            }
            clients.closeAll(conns);
        }
    }

    /** Recognises the figure's broadcasts among a connection's frames (after its join reply). */
    private static final class MessageCheck {
        private final ByteBuf mark = Unpooled.wrappedBuffer(MARK);

        boolean isOurs(ByteBuf text) {
            return ByteBufUtil.indexOf(mark.duplicate(), text) >= 0;
        }
    }
}
