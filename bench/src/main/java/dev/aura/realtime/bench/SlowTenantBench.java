package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.ControlApiClient;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Figure 2b (issues 36 and 39): figure 2's stream latency for this stack's project (B) at 1,000
 * rows/s while another project (A) on the same worker has a read policy that takes 50 ms a row
 * and commits {@value #SLOW_RATE} rows/s to a subscriber of its own. The worker runs one shard
 * ({@code CDC_NUM_SHARDS=1}), so A's checks and B's rows share it: the strongest case. A's
 * checks outlive {@code CDC_TENANT_STATEMENT_TIMEOUT_MS}, so A goes to its late lane
 * (docs/design.md C14) and B must keep figure 2's target ({@link LatencyBench#STREAM_1000}).
 *
 * <p>Rounds alternate B alone and B beside A (alone, beside; beside, alone; ...) on one warm
 * worker and ws-front; the baseline is B alone. A round is valid only when every row of B's
 * segment arrived and, beside A, every one of A's rows arrived too (late is allowed, lost is
 * not); how late A's rows were is reported.
 */
final class SlowTenantBench {
    static final String SLOW_TABLE = "bench_slow";
    /** A's rows per second: one every 50 ms, as many as its 50 ms policy can check one by one. */
    static final int SLOW_RATE = 20;

    private final Stack s;
    private final Report report;
    private final String projectA = UUID.randomUUID().toString();

    /** Rows of one tag received by one client: latency, distinct ids. */
    private static final class Tagged {
        final String tag;
        final Stats latency = new Stats();
        final Set<Long> ids = ConcurrentHashMap.newKeySet();

        Tagged(String tag) {
            this.tag = tag;
        }

        void onText(ByteBuf text) {
            long now = LatencyBench.micros(Instant.now());
            String frame = text.toString(StandardCharsets.UTF_8);
            if (!frame.contains("\"postgres_changes\"")) {
                return;
            }
            try {
                JsonNode data = Stack.JSON.readTree(frame).path("payload").path("data");
                String ts = data.path("commit_timestamp").asText(null);
                if (ts != null
                        && tag.equals(data.path("record").path("note").asText())
                        && ids.add(data.path("record").path("id").asLong(-1))) {
                    latency.add(now - LatencyBench.micros(Instant.parse(ts)));
                }
            } catch (Exception e) {
                System.err.println("slow tenant: unreadable frame: " + e.getMessage());
            }
        }
    }

    private volatile Tagged b = new Tagged("");
    private volatile Tagged a = new Tagged("");

    SlowTenantBench(Stack s, Report report) {
        this.s = s;
        this.report = report;
    }

    /** Needs the main ws-front running and the worker stopped; leaves the worker stopped. */
    void run(int seconds, int rounds) throws Exception {
        WarmProcess.allowPauses(s);
        s.stopWorker();
        Rounds fig = new Rounds(
                "2b. commit→client latency, stream, project B @ " + LatencyBench.rateLabel(1000) + " beside project A"
                        + " on the same worker and shard (a 50 ms/row read policy, " + SLOW_RATE + " rows/s)",
                "ms",
                "B alone, p99");
        try (WarmProcess w = WarmProcess.worker(
                        s,
                        "cdc-worker-slow-tenant",
                        s.slot,
                        Map.of("CDC_SOURCE", "stream", "CDC_NUM_SHARDS", "1"),
                        List.of());
                WsClients clients = new WsClients(1)) {
            w.awaitActive();
            createSlowProject(w);
            joinB(clients);
            joinA(clients);
            segment(false, seconds, "slow-warm-alone");
            segment(true, seconds, "slow-warm-beside");
            for (int round = 0; round < rounds; round++) {
                boolean besideFirst = round % 2 == 1;
                Turn first = segment(besideFirst, seconds, "slow-r" + round + "-" + (besideFirst ? "beside" : "alone"));
                Turn second =
                        segment(!besideFirst, seconds, "slow-r" + round + "-" + (besideFirst ? "alone" : "beside"));
                Turn beside = besideFirst ? first : second;
                Turn alone = besideFirst ? second : first;
                fig.add(
                                beside.b()
                                        .invalidIf(
                                                beside.aReceived() != beside.aSent(),
                                                "project A: " + beside.aReceived() + " of " + beside.aSent()
                                                        + " rows arrived"),
                                alone.b(),
                                String.format(
                                        "A's rows %d/%d, late by p50 %.0f / max %.0f ms; %s first",
                                        beside.aReceived(),
                                        beside.aSent(),
                                        beside.aP50(),
                                        beside.aMax(),
                                        besideFirst ? "beside" : "alone"))
                        .metric("p50", beside.p50())
                        .metric("alone p50", alone.p50())
                        .metric("A late p50", beside.aP50())
                        .metric("A late max", beside.aMax());
            }
            lateLaneNote(w);
        }
        report.row(
                fig,
                String.format(
                        "p50 median %.1f ms; A's rows late by median p50 %.0f ms, max %.0f ms",
                        fig.medianMetric("p50"), fig.medianMetric("A late p50"), fig.medianMetric("A late max")),
                String.format(
                        "B alone, same worker, alternating: median p50 %.1f / p99 %.1f ms",
                        fig.medianMetric("alone p50"), fig.medianBaseline()),
                LatencyBench.STREAM_1000);
    }

    /** Whether A went to its late lane (the worker logs each time a project does, docs/design.md C14). */
    private void lateLaneNote(WarmProcess w) throws Exception {
        String log = java.nio.file.Files.readString(w.process.logFile());
        long late = log.lines()
                .filter(l -> l.contains(projectA) && l.contains("go through its late lane"))
                .count();
        long back = log.lines()
                .filter(l -> l.contains(projectA) && l.contains("back in the shared lane"))
                .count();
        report.note("2b: project A (50 ms/row policy) went to its late lane " + late + " times and came back " + back
                + " times in the figure (the worker's log)");
    }

    /** One segment's outcome: B's sample (p99, counted), B's p50, A's counts and lateness. */
    private record Turn(Sample b, double p50, long aSent, long aReceived, double aP50, double aMax) {}

    /** B at 1,000 rows/s for {@code seconds}, with A's writer beside it when {@code beside}; waits for both tails. */
    private Turn segment(boolean beside, int seconds, String tag) throws Exception {
        Tagged tb = new Tagged(tag);
        Tagged ta = new Tagged(tag + "-a");
        b = tb;
        a = ta;
        AtomicLong aSent = new AtomicLong();
        ScheduledExecutorService slow = Executors.newSingleThreadScheduledExecutor();
        try (Connection c = s.pg.connect();
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO project_" + projectA.replace('-', '_') + "." + SLOW_TABLE + "(note) VALUES (?)")) {
            ps.setString(1, ta.tag);
            if (beside) {
                slow.scheduleAtFixedRate(
                        () -> {
                            try {
                                ps.executeUpdate();
                                aSent.incrementAndGet();
                            } catch (Exception e) {
                                System.err.println("slow tenant writer: " + e.getMessage());
                            }
                        },
                        0,
                        1000 / SLOW_RATE,
                        TimeUnit.MILLISECONDS);
            }
            long sent = LatencyBench.write(s, 1000, seconds, tag);
            slow.shutdown();
            slow.awaitTermination(5, TimeUnit.SECONDS);
            Progress.await(tb.ids::size, sent, Duration.ofSeconds(5), Duration.ofSeconds(60));
            // A's rows are late by design, checked one by one in its lane: all must arrive
            Progress.await(ta.ids::size, aSent.get(), Duration.ofSeconds(15), Duration.ofSeconds(180));
            Stats al = ta.latency;
            return new Turn(
                    Sample.of(tb.latency.percentileMs(99)).counted(sent, tb.ids.size()),
                    tb.latency.percentileMs(50),
                    aSent.get(),
                    ta.ids.size(),
                    al.percentileMs(50),
                    al.percentileMs(100));
        } finally {
            slow.shutdownNow();
        }
    }

    /** Project A: its table with a read policy that takes 50 ms a row, enabled for realtime on {@code w}. */
    private void createSlowProject(WarmProcess w) {
        String schema = s.createProject(projectA);
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!"true"
                .equals(s.pg.queryOne("SELECT (realtime_schema_version >= 1)::text FROM aura_platform.projects"
                        + " WHERE project_id = '" + projectA + "'"))) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the cdc-worker did not provision project A within 60 s");
            }
            Procs.sleep(100);
        }
        String t = schema + "." + SLOW_TABLE;
        s.pg.execute(
                "CREATE TABLE " + t + " (id bigserial PRIMARY KEY, note text)",
                "GRANT SELECT ON " + t + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + t + " ENABLE ROW LEVEL SECURITY",
                // a membership subquery that is this slow on a busy database: 50 ms a row (issue 36)
                "CREATE POLICY slow ON " + t + " FOR SELECT USING ((SELECT true FROM pg_sleep(0.05)))");
        new ControlApiClient(w.http.port()).enable(projectA, SLOW_TABLE, s.tokens.serviceRole(projectA));
    }

    private void joinB(WsClients clients) throws Exception {
        WsClients.Conn conn = clients.connect(s.wsUri("1.0.0"), 0, (c, text) -> b.onText(text));
        conn.open.get(30, TimeUnit.SECONDS);
        join(conn, "realtime:slow-b", LatencyBench.TABLE, null);
    }

    /** A's subscriber: a signed-in user of project A, whose every row runs the 50 ms policy. */
    private void joinA(WsClients clients) throws Exception {
        WsClients.Conn conn = clients.connect(s.wsUriOf(projectA, "1.0.0"), 1, (c, text) -> a.onText(text));
        conn.open.get(30, TimeUnit.SECONDS);
        join(
                conn,
                "realtime:slow-a",
                SLOW_TABLE,
                s.tokens.authenticated(projectA, UUID.randomUUID().toString()));
    }

    private static void join(WsClients.Conn conn, String topic, String table, String token) throws Exception {
        conn.send("{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":"
                + "{\"broadcast\":{\"self\":false,\"ack\":false},\"presence\":{\"key\":\"\"},"
                + "\"postgres_changes\":[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"" + table + "\"}]}"
                + (token == null ? "" : ",\"access_token\":\"" + token + "\"") + "},\"ref\":\"1\",\"join_ref\":\"1\"}");
        if (!conn.joined.get(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the join of " + topic + " was refused");
        }
    }
}
