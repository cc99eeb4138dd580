package dev.aura.realtime.bench;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Figure 8b (issue 23): a join storm. {@code clients} WebSocket clients (vsn 1.0.0) of one
 * project, connected half to each of two ws-front replicas, send their {@code phx_join} at once
 * (one loop over the sockets, no pacing): first to a public channel without bindings (the
 * baseline), then to one postgres_changes channel ({@code event '*'} on {@code public.}
 * {@value JoinBench#TABLE}, no filter). The project's limits are raised to 2,000 users and 2,000
 * joins/s first (issue 23's setting). Reported: how many got the ok reply within the client's
 * {@link #JOIN_TIMEOUT_MS} join timeout (after one unreported round of both storms on the fresh
 * replicas), p50/p95/max to the ok reply and the max to the
 * {@code system} "Subscribed to PostgreSQL" push. Target: every client SUBSCRIBED within 5 s.
 */
final class JoinStormBench {
    static final long JOIN_TIMEOUT_MS = 5_000;
    static final int MAX_USERS = 2_000;
    static final int MAX_JOINS_PER_SECOND = 2_000;

    private final Stack s;
    private final Report report;

    JoinStormBench(Stack s, Report report) {
        this.s = s;
        this.report = report;
    }

    /** One storm's outcome: latencies of the joins that got an ok reply, and how many did within the timeout. */
    record Storm(int clients, Stats ok, Stats subscribed, long okInTime, long refused, long maxOkMs, long maxSubMs) {
        String describe() {
            return String.format(
                    "%d/%d ok within %d s, %s, max %d ms%s%s",
                    okInTime,
                    clients,
                    JOIN_TIMEOUT_MS / 1000,
                    ok.summary(),
                    maxOkMs,
                    subscribed.count() > 0 ? "; \"Subscribed\" max " + maxSubMs + " ms" : "",
                    refused > 0 ? ", " + refused + " refused" : "");
        }
    }

    /** Issue 23's target: the slowest of the clients SUBSCRIBED (ok reply and system push) within the join timeout. */
    static final Target TARGET =
            Target.of(Target.atMost("value", "slowest client to SUBSCRIBED", JOIN_TIMEOUT_MS, "ms"));

    /**
     * Starts (and stops) two replicas of its own; needs a running worker and {@link JoinBench#createTable}.
     * One unreported round of both storms warms the replicas, then {@code rounds} rounds, public and
     * postgres_changes alternating first; a round where a client was refused or never SUBSCRIBED is invalid.
     */
    void run(int clients, int rounds) throws Exception {
        s.projectLimits(MAX_USERS, MAX_JOINS_PER_SECOND);
        Map<String, String> env = Map.of("WS_MAX_JOINS_PER_SECOND", "1000000", "WS_IDLE_TIMEOUT_MS", "3600000");
        Stack.Replica r1 = s.startReplica("ws-front-storm-1", env, List.of());
        Stack.Replica r2 = s.startReplica("ws-front-storm-2", env, List.of());
        Rounds fig = new Rounds(
                "8b. join storm: " + clients + " clients at once, 1 postgres_changes channel, 2 replicas (limits "
                        + MAX_USERS + " users, " + MAX_JOINS_PER_SECOND + " joins/s)",
                "ms",
                "public, no binding: slowest ok");
        try {
            // warm-up: the same storms once on the fresh replicas (their JIT), not reported
            storm(clients, r1, r2, null);
            storm(clients, r1, r2, JoinBench.TABLE);
            for (int round = 0; round < rounds; round++) {
                Storm pub;
                Storm pgc;
                if (round % 2 == 0) {
                    pub = storm(clients, r1, r2, null);
                    pgc = storm(clients, r1, r2, JoinBench.TABLE);
                } else {
                    pgc = storm(clients, r1, r2, JoinBench.TABLE);
                    pub = storm(clients, r1, r2, null);
                }
                fig.add(
                        Sample.of(Math.max(pgc.maxOkMs(), pgc.maxSubMs()))
                                .counted(
                                        clients,
                                        Math.min(
                                                pgc.okInTime(), pgc.subscribed().count()))
                                .invalidIf(pgc.refused() > 0, pgc.refused() + " joins refused"),
                        Sample.of(pub.maxOkMs())
                                .counted(clients, pub.okInTime())
                                .invalidIf(pub.refused() > 0, pub.refused() + " public joins refused"),
                        "postgres_changes: " + pgc.describe() + "; public: " + pub.describe());
            }
            report.row(
                    fig,
                    null,
                    "public storms of the same clients, same rounds: median slowest ok " + fig.fmt(fig.medianBaseline())
                            + " ms",
                    TARGET);
        } finally {
            r1.process().stop();
            r2.process().stop();
        }
    }

    /** Connects {@code clients} sockets (half to each replica), joins them all at once and waits for every answer. */
    private Storm storm(int clients, Stack.Replica r1, Stack.Replica r2, String table) throws Exception {
        long[] sentAt = new long[clients];
        long[] okAt = new long[clients];
        long[] subAt = new long[clients];
        boolean[] refused = new boolean[clients];
        CountDownLatch answered = new CountDownLatch(clients * (table == null ? 1 : 2));
        String topic = table == null ? "realtime:storm-public" : "realtime:storm";
        WsClients.Listener listener = (conn, text) -> {
            String frame = text.toString(StandardCharsets.UTF_8);
            int i = conn.index;
            if (PhxFrames.isReply(frame) && "S".equals(PhxFrames.ref(frame)) && okAt[i] == 0 && !refused[i]) {
                if (PhxFrames.isOk(frame)) {
                    okAt[i] = System.nanoTime();
                    answered.countDown();
                } else {
                    refused[i] = true;
                    answered.countDown();
                    if (table != null) {
                        answered.countDown();
                    }
                }
            } else if (table != null && subAt[i] == 0 && PhxFrames.isSubscribed(frame)) {
                subAt[i] = System.nanoTime();
                answered.countDown();
            }
        };
        try (WsClients ws = new WsClients(1, true)) {
            URI u1 = s.wsUri(r1.port(), "1.0.0");
            URI u2 = s.wsUri(r2.port(), "1.0.0");
            List<WsClients.Conn> conns = new ArrayList<>(clients);
            for (int i = 0; i < clients; i++) {
                conns.add(ws.connect(i % 2 == 0 ? u1 : u2, i, listener));
                if (i % 64 == 63) {
                    conns.get(i).open.join();
                }
            }
            conns.forEach(c -> c.open.join());
            String join = PhxFrames.join(topic, PhxFrames.config(table, false, 0), null, "S");
            for (WsClients.Conn c : conns) {
                sentAt[c.index] = System.nanoTime();
                c.send(join);
            }
            answered.await(JOIN_TIMEOUT_MS * 3, TimeUnit.MILLISECONDS);
            Stats ok = new Stats();
            Stats sub = new Stats();
            long inTime = 0;
            long refusals = 0;
            long maxOk = 0;
            long maxSub = 0;
            for (int i = 0; i < clients; i++) {
                refusals += refused[i] ? 1 : 0;
                if (okAt[i] != 0) {
                    long us = (okAt[i] - sentAt[i]) / 1000;
                    ok.add(us);
                    maxOk = Math.max(maxOk, us / 1000);
                    inTime += us <= JOIN_TIMEOUT_MS * 1000 ? 1 : 0;
                }
                if (subAt[i] != 0) {
                    long us = (subAt[i] - sentAt[i]) / 1000;
                    sub.add(us);
                    maxSub = Math.max(maxSub, us / 1000);
                }
            }
            ws.closeAll(conns);
            return new Storm(clients, ok, sub, inTime, refusals, maxOk, maxSub);
        }
    }
}
