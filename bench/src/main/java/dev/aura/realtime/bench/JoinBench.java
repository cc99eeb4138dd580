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
 * Figures 6 and 8 (issues 16 and 23): channel joins per second and join latency of <b>private</b> channels,
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
 *
 * <p>Figure 8 (issue 23): the same loop with one postgres_changes binding per join
 * ({@code event '*'} on {@code public.}{@value #TABLE}, no filter, as realtime-js sends it): the
 * ok reply is timed (realtime-js reports SUBSCRIBED on it) and so is the {@code system}
 * "Subscribed to PostgreSQL" push that follows; the leave and the next join go after the push.
 * Targets (issue 23): postgres_changes ≥ 2,000 joins/s, private ≥ 1,000 joins/s, both p95 ≤ 50 ms
 * to the ok reply; the baseline of both is the public joins (no binding, no policy) of the same run.
 */
final class JoinBench {
    private static final Pattern REF = Pattern.compile("\"ref\":\"([JL])(\\d+)\"");
    /** The table every postgres_changes join binds to (created and enabled by {@link #createTable}). */
    static final String TABLE = "bench_joins";

    static final String SUBSCRIBED = "Subscribed to PostgreSQL";
    /** Issue 23's targets (value: joins/s; metric "p95": ms to the ok reply). */
    static final Target PG_JOINS =
            Target.of(Target.atLeast("value", "", 2_000, "joins/s"), Target.atMost("p95", "p95", 50, "ms"));

    static final Target PRIVATE_JOINS =
            Target.of(Target.atLeast("value", "", 1_000, "joins/s"), Target.atMost("p95", "p95", 50, "ms"));

    /** What one join asks for. */
    enum Mode {
        PUBLIC,
        PRIVATE,
        POSTGRES_CHANGES
    }
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

    /** The table of the postgres_changes joins, enabled for realtime. */
    static void createTable(Stack s) {
        s.pg.execute(
                "CREATE TABLE IF NOT EXISTS " + s.table(TABLE) + "(id bigserial PRIMARY KEY, note text)",
                "GRANT SELECT ON " + s.table(TABLE) + " TO aura_anon, aura_authenticated");
        s.enable(TABLE);
    }

    /**
     * Needs a running worker and front; figure 8 (postgres_changes) only with {@code postgresChanges}.
     * One unreported round of every mode, then {@code rounds} rounds, the modes' order rotated each
     * round; a warm-up of {@code warmupSeconds} before each measured window. A round with a refused
     * join is invalid.
     */
    void run(int connections, int warmupSeconds, int seconds, boolean postgresChanges, int rounds) throws Exception {
        String in = connections + " in flight";
        Rounds priv = new Rounds("6. private joins (read policy) vs public, " + in, "joins/s", "public joins");
        Rounds pgc = new Rounds("8. postgres_changes joins (1 binding) vs public, " + in, "joins/s", "public joins");
        List<Mode> order = new java.util.ArrayList<>(
                postgresChanges
                        ? List.of(Mode.PUBLIC, Mode.PRIVATE, Mode.POSTGRES_CHANGES)
                        : List.of(Mode.PUBLIC, Mode.PRIVATE));
        // one unreported round of every mode first: the services' JIT (the first round ran at a fraction otherwise)
        for (Mode m : order) {
            measure(m, connections, warmupSeconds, Math.min(seconds, 2));
        }
        for (int round = 0; round < rounds; round++) {
            Map<Mode, Result> got = new java.util.EnumMap<>(Mode.class);
            for (Mode m : order) {
                got.put(m, measure(m, connections, warmupSeconds, seconds));
            }
            Result pub = got.get(Mode.PUBLIC);
            add(priv, got.get(Mode.PRIVATE), pub, order);
            if (postgresChanges) {
                add(pgc, got.get(Mode.POSTGRES_CHANGES), pub, order);
            }
            System.out.printf(
                    "  joins round %d: %s%n",
                    round + 1, got.values().stream().map(JoinBench::describe).toList());
            order.add(order.remove(0));
        }
        row(priv, PRIVATE_JOINS, " (Supabase publishes 1,000 joins/s, p95 49 ms)");
        if (postgresChanges) {
            row(pgc, PG_JOINS, "");
        }
    }

    private static void add(Rounds fig, Result r, Result pub, List<Mode> order) {
        fig.add(sample(r), sample(pub), "order " + order + "; " + describe(r) + "; public: " + describe(pub))
                .metric("p95", r.latency().percentileMs(95))
                .metric("public p95", pub.latency().percentileMs(95));
        if (r.subscribed() != null) {
            fig.metric("to Subscribed p95", r.subscribed().percentileMs(95));
        }
    }

    /** A mode's round: joins/s; invalid when a join was refused (the loop measured refusals). */
    private static Sample sample(Result r) {
        return Sample.of(r.perSecond())
                .invalidIf(
                        r.errors() > 0,
                        r.errors() + " joins refused, the first with "
                                + (r.firstRefusal() == null
                                        ? "?"
                                        : r.firstRefusal()
                                                .substring(
                                                        0,
                                                        Math.min(
                                                                160,
                                                                r.firstRefusal().length()))));
    }

    private void row(Rounds fig, Target target, String extra) {
        report.row(
                fig,
                String.format(
                        "p95 median %.1f ms (public %.1f ms)%s",
                        fig.medianMetric("p95"), fig.medianMetric("public p95"), extra),
                "public joins, same rounds: median " + Report.f0(fig.medianBaseline()) + " joins/s",
                target);
    }

    private static String describe(Result r) {
        return String.format(
                "%s %s joins/s, %s%s%s",
                r.mode(),
                Report.f0(r.perSecond()),
                r.latency().summary(),
                r.subscribed() == null
                        ? ""
                        : "; to \"" + SUBSCRIBED + "\": p95 "
                                + Report.f2(r.subscribed().percentileMs(95)) + " ms",
                r.errors() > 0 ? ", " + r.errors() + " refused" : "");
    }

    /**
     * @param subscribed latency to the {@code system} push (postgres_changes only), else null
     * @param firstRefusal the first refused join's reply, or null
     */
    record Result(Mode mode, double perSecond, Stats latency, Stats subscribed, long errors, String firstRefusal) {}

    private Result measure(Mode mode, int connections, int warmupSeconds, int seconds) throws Exception {
        Map<Integer, Loop> loops = new ConcurrentHashMap<>();
        AtomicInteger recording = new AtomicInteger();
        Stats latency = new Stats();
        Stats subscribed = new Stats();
        AtomicLong joins = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicReference<String> firstRefusal = new AtomicReference<>();
        URI uri = s.wsUri("1.0.0");
        try (WsClients clients = new WsClients(1)) {
            WsClients.Listener listener = (conn, text) -> {
                Loop loop = loops.get(conn.index);
                if (loop != null) {
                    loop.onFrame(text, recording.get() == 1, latency, subscribed, joins, errors, firstRefusal);
                }
            };
            List<WsClients.Conn> conns = clients.connectMany(uri, connections, 64, listener);
            // WsClients hands frames to the listener after a first join: join a throw-away topic
            clients.joinAll(conns, "realtime:warm", WsClients.broadcastConfig(), 64);
            String token = s.tokens.authenticated(s.projectId, UUID.randomUUID().toString());
            for (WsClients.Conn c : conns) {
                Loop loop = new Loop(c, mode, token);
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
            return new Result(
                    mode,
                    joins.get() / elapsed,
                    latency,
                    mode == Mode.POSTGRES_CHANGES ? subscribed : null,
                    errors.get(),
                    firstRefusal.get());
        }
    }

    /** One connection's closed loop: one join in flight. */
    private static final class Loop {
        private final WsClients.Conn conn;
        private final Mode mode;
        private final String token;
        private volatile int n;
        private volatile long sentAt;
        /** postgres_changes: the ok reply came, the system push is awaited. */
        private volatile boolean replied;

        private volatile boolean stopped;

        Loop(WsClients.Conn conn, Mode mode, String token) {
            this.conn = conn;
            this.mode = mode;
            this.token = token;
        }

        private String topic() {
            return "realtime:bench:" + conn.index + ":" + n;
        }

        /** Sends the next join (event loop of the connection, or the starter). */
        void next() {
            if (stopped) {
                return;
            }
            n++;
            replied = false;
            sentAt = System.nanoTime();
            String changes = mode == Mode.POSTGRES_CHANGES
                    ? "[{\"event\":\"*\",\"schema\":\"public\",\"table\":\"" + TABLE + "\"}]"
                    : "[]";
            conn.send("{\"topic\":\"" + topic()
                    + "\",\"event\":\"phx_join\",\"payload\":{\"config\":{\"broadcast\":{\"ack\":false,\"self\":false},"
                    + "\"presence\":{\"key\":\"\",\"enabled\":false},\"postgres_changes\":" + changes + ",\"private\":"
                    + (mode == Mode.PRIVATE) + "},\"access_token\":\"" + token + "\"},\"ref\":\"J" + n
                    + "\",\"join_ref\":\"J" + n + "\"}");
        }

        void onFrame(
                ByteBuf text,
                boolean record,
                Stats latency,
                Stats subscribed,
                AtomicLong joins,
                AtomicLong errors,
                AtomicReference<String> firstRefusal) {
            String frame = text.toString(StandardCharsets.UTF_8);
            if (replied) {
                // postgres_changes: the system push of the current join ends it
                if (!frame.contains("\"event\":\"system\"") || !frame.contains("\"topic\":\"" + topic() + "\"")) {
                    return;
                }
                boolean ok = frame.contains(SUBSCRIBED);
                if (record) {
                    if (ok) {
                        subscribed.add((System.nanoTime() - sentAt) / 1000);
                    } else {
                        errors.incrementAndGet();
                        firstRefusal.compareAndSet(null, frame);
                    }
                }
                finish(true, !ok);
                return;
            }
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
            if (ok && mode == Mode.POSTGRES_CHANGES) {
                replied = true;
                return;
            }
            finish(ok, !ok);
        }

        /** Leaves the topic when it was joined, then sends the next join now or after a pause. */
        private void finish(boolean joined, boolean pause) {
            if (joined) {
                conn.send("{\"topic\":\"" + topic() + "\",\"event\":\"phx_leave\",\"payload\":{},\"ref\":\"L" + n
                        + "\",\"join_ref\":\"J" + n + "\"}");
            }
            if (pause) {
                conn.channel.eventLoop().schedule(this::next, RETRY_MS, TimeUnit.MILLISECONDS);
            } else {
                next();
            }
        }

        void stop() {
            stopped = true;
        }
    }
}
