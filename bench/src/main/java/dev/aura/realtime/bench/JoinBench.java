package dev.aura.realtime.bench;

import io.netty.buffer.ByteBuf;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Figure 6 (issue 16): channel joins per second and join latency of <b>private</b> channels,
 * whose every join runs the read check (ws-front → NATS → cdc-worker → the project's RLS policy on
 * its messages table, probe rows inserted and rolled back on the tenant pool), against
 * <b>public</b> joins of the same project in the same run. Supabase publishes 1,000 joins/s with
 * p95 49 ms on its RLS channel benchmark (their hardware, for reference only).
 *
 * <p>Load: {@code connections} WebSocket connections (vsn 1.0.0) of one project, each a closed
 * loop with one join in flight: {@code phx_join} of a new topic {@code bench:<conn>:<n>} with an
 * authenticated user's {@code access_token} (as realtime-js sends it), then, on the ok reply, the
 * latency is recorded, {@code phx_leave} sent (not awaited) and the next join sent. The policy is
 * Supabase's guide's shape: {@code realtime.topic() LIKE 'bench:%'} for signed-in users. Each mode
 * runs a warm-up, then {@code seconds} measured; a refused join counts as an error, not a join,
 * and its connection waits {@link #RETRY_MS} before the next (realtime-js waits a second or more).
 */
final class JoinBench {
    private static final Pattern REF = Pattern.compile("\"ref\":\"([JL])(\\d+)\"");
    /** Pause of a connection after a refused join. */
    static final long RETRY_MS = 100;

    private static final byte[] STATUS_OK = "\"status\":\"ok\"".getBytes(StandardCharsets.US_ASCII);

    private final Stack s;
    private final Report report;

    JoinBench(Stack s, Report report) {
        this.s = s;
        this.report = report;
    }

    /** The project's realtime schema (the worker provisions it) with the read policy. */
    static void createPolicy(Stack s) {
        String rt = "\"" + s.schema + "_realtime\"";
        long deadline = System.nanoTime() + 60_000_000_000L;
        // version 1 before the per-project identity (issue 22), 2 since: any provisioned layout
        while (!"true"
                .equals(s.pg.queryOne("SELECT (realtime_schema_version >= 1)::text FROM aura_platform.projects"
                        + " WHERE project_id = '" + s.projectId + "'"))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the cdc-worker did not provision " + rt + " within 60 s");
            }
            Procs.sleep(100);
        }
        s.pg.execute("CREATE POLICY bench_read ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                + ".topic() LIKE 'bench:%' AND auth.uid() IS NOT NULL)");
    }

    /** Needs a running worker and front. */
    void run(int connections, int warmupSeconds, int seconds) throws Exception {
        Result pub = measure(false, connections, warmupSeconds, seconds);
        Result priv = measure(true, connections, warmupSeconds, seconds);
        double rateRatio = priv.perSecond() / pub.perSecond();
        double p95Ratio = priv.latency().percentileMs(95) / pub.latency().percentileMs(95);
        for (Result r : List.of(pub, priv)) {
            if (r.firstRefusal() != null) {
                report.note("joins: " + r.errors() + " refused, the first with " + r.firstRefusal());
            }
        }
        report.row(
                "6. private joins (read policy) vs public, " + connections + " in flight",
                String.format(
                        "%s joins/s, %s%s",
                        Report.f0(priv.perSecond()),
                        priv.latency().summary(),
                        priv.errors() > 0 ? ", " + priv.errors() + " refused" : ""),
                String.format(
                        "public: %s joins/s, %s%s",
                        Report.f0(pub.perSecond()),
                        pub.latency().summary(),
                        pub.errors() > 0 ? ", " + pub.errors() + " refused" : ""),
                String.format("%.2f× joins/s, %.1f× p95", rateRatio, p95Ratio),
                "– (Supabase publishes 1,000 joins/s, p95 49 ms)",
                null);
    }

    /** @param firstRefusal the first refused join's reply, or null */
    record Result(double perSecond, Stats latency, long errors, String firstRefusal) {}

    private Result measure(boolean privateChannel, int connections, int warmupSeconds, int seconds) throws Exception {
        Map<Integer, Loop> loops = new ConcurrentHashMap<>();
        AtomicInteger recording = new AtomicInteger();
        Stats latency = new Stats();
        AtomicLong joins = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstRefusal = new AtomicReference<>();
        URI uri = s.wsUri("1.0.0");
        try (WsClients clients = new WsClients(1)) {
            WsClients.Listener listener = (conn, text) -> {
                Loop loop = loops.get(conn.index);
                if (loop != null) {
                    loop.onFrame(text, recording.get() == 1, latency, joins, errors, firstRefusal);
                }
            };
            List<WsClients.Conn> conns = clients.connectMany(uri, connections, 64, listener);
            // WsClients hands frames to the listener after a first join: join a throw-away topic
            clients.joinAll(conns, "realtime:warm", WsClients.broadcastConfig(), 64);
            String token = s.tokens.authenticated(s.projectId, UUID.randomUUID().toString());
            for (WsClients.Conn c : conns) {
                Loop loop = new Loop(c, privateChannel, token);
                loops.put(c.index, loop);
                loop.next();
            }
            Procs.sleep(warmupSeconds * 1000L);
            recording.set(1);
            long t0 = System.nanoTime();
            Procs.sleep(seconds * 1000L);
            recording.set(2);
            double elapsed = (System.nanoTime() - t0) / 1e9;
            loops.values().forEach(Loop::stop);
            clients.closeAll(conns);
            return new Result(joins.get() / elapsed, latency, errors.get(), firstRefusal.get());
        }
    }

    /** One connection's closed loop: one join in flight. */
    private static final class Loop {
        private final WsClients.Conn conn;
        private final boolean privateChannel;
        private final String token;
        private volatile int n;
        private volatile long sentAt;
        private volatile boolean stopped;

        Loop(WsClients.Conn conn, boolean privateChannel, String token) {
            this.conn = conn;
            this.privateChannel = privateChannel;
            this.token = token;
        }

        /** Sends the next join (event loop of the connection, or the starter). */
        void next() {
            if (stopped) {
                return;
            }
            n++;
            String topic = "realtime:bench:" + conn.index + ":" + n;
            sentAt = System.nanoTime();
            conn.send("{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":{\"private\":"
                    + privateChannel + ",\"broadcast\":{\"self\":false}},\"access_token\":\"" + token
                    + "\"},\"ref\":\"J" + n + "\",\"join_ref\":\"J" + n + "\"}");
        }

        void onFrame(
                ByteBuf text,
                boolean record,
                Stats latency,
                AtomicLong joins,
                AtomicLong errors,
                AtomicReference<String> firstRefusal) {
            String frame = text.toString(StandardCharsets.UTF_8);
            Matcher m = REF.matcher(frame);
            if (!m.find() || !m.group(1).equals("J") || Integer.parseInt(m.group(2)) != n) {
                return; // a leave's reply, or anything else
            }
            long micros = (System.nanoTime() - sentAt) / 1000;
            boolean ok = frame.contains(new String(STATUS_OK, StandardCharsets.US_ASCII));
            if (record) {
                if (ok) {
                    latency.add(micros);
                    joins.incrementAndGet();
                } else {
                    errors.incrementAndGet();
                    firstRefusal.compareAndSet(null, frame);
                }
            }
            if (ok) {
                conn.send("{\"topic\":\"realtime:bench:" + conn.index + ":" + n
                        + "\",\"event\":\"phx_leave\",\"payload\":{},\"ref\":\"L" + n + "\",\"join_ref\":\"J" + n
                        + "\"}");
                next();
            } else {
                conn.channel.eventLoop().schedule(this::next, RETRY_MS, TimeUnit.MILLISECONDS);
            }
        }

        void stop() {
            stopped = true;
        }
    }
}
