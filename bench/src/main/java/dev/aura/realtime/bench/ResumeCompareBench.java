package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.Waits;
import io.nats.client.JetStreamApiException;
import io.netty.buffer.ByteBuf;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Issue 27's cost: figures 1 and 2 with postgres_changes resume off and on in the same run, on the
 * same WARM processes ({@code scripts/bench.sh --resume-compare}).
 *
 * <p>One cdc-worker ({@code CDC_SOURCE=stream}) and one ws-front run for the whole figure. The
 * project's {@code postgres_changes_resume_seconds} is switched between 0 and {@link #WINDOW_SECONDS}
 * for each turn; the worker re-reads it every 200 ms ({@code AURA_HISTORY_REFRESH_MS}) and creates or
 * deletes the project's history stream, ws-front every 200 ms ({@code PROJECT_LIMITS_REFRESH_MS}). A
 * turn starts once the stream exists (on) or is gone (off). Turns alternate (off, on; on, off; ...),
 * after one untimed warm-up turn of each mode.
 *
 * <p>A turn: (1) throughput, figure 1's method: the worker is paused (SIGSTOP), a backlog of
 * single-row transactions is written, the worker resumed; time from the resume to the last event at a
 * NATS subscriber. (2) latency, figure 2's method at 1,000 rows/s (100 txns/s × 10 rows): commit →
 * WebSocket client, rows of the segment only. The latency client joins anew each turn as a new
 * signed-in user (a {@code sub} of its own, so it never resumes an earlier turn's record), so with
 * resume on ws-front keeps its resume record (one KV put in flight per channel) as it would for a real
 * user; the note under the table says whether the record existed. What a replay costs is not in
 * this figure.
 */
final class ResumeCompareBench {
    static final int WINDOW_SECONDS = 60;
    private static final String USER = "bench-resume-user";

    private final Stack s;
    private final ChangeCounter counter;
    private final Report report;
    private final CdcThroughputBench cdc;
    private final ResumeRecords records;

    private final AtomicLong received = new AtomicLong();

    private volatile java.util.Set<Long> ids = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile Stats current = new Stats();
    private volatile String tag = "";

    ResumeCompareBench(Stack s, ChangeCounter counter, Report report) {
        this.s = s;
        this.counter = counter;
        this.report = report;
        this.cdc = new CdcThroughputBench(s, counter, report);
        this.records = new ResumeRecords(s.client);
    }

    /** Resume on costs at most 10 % of the rows/s (median of the per-round on/off ratios). */
    static final Target THROUGHPUT = Target.of(Target.atLeast("ratio", "", 0.9, "× resume off's rows/s"));
    /** Resume on adds at most 5 ms to the p50 (median of the per-round differences). */
    static final Target P50_ADDED = Target.of(Target.atMost("added", "p50 added", 5, "ms"));

    /**
     * One turn: the backlog's rate (NaN unless every event arrived), the latency segment, the
     * history stream and whether this turn's client got a resume record of its own.
     */
    private record Turn(
            Sample rate,
            Sample p99,
            double p50,
            double historyEvents,
            double historyBytes,
            boolean record,
            int joins,
            double workerCpuPer1k,
            double natsCpuPer1k) {}

    /** {@code rounds} (≥ 2) of off and on; {@code rows} per backlog, {@code latencySeconds} per segment. */
    void run(int rows, int latencySeconds, int rounds) throws Exception {
        int r = Math.max(2, rounds);
        WarmProcess.allowPauses(s);
        s.stopWorker();
        s.stopFront();
        setResume(false);
        s.startFront(Map.of("PROJECT_LIMITS_REFRESH_MS", "200"), List.of());
        Rounds tput = new Rounds(
                "27. CDC throughput, " + rows / 1000 + "k single-row txns, resume on (warm)", "rows/s", "resume off");
        Rounds p99 =
                new Rounds("27. latency @ " + LatencyBench.rateLabel(1000) + ", resume on", "ms", "resume off, p99");
        try (WarmProcess w = WarmProcess.worker(
                        s,
                        "cdc-worker-resume",
                        s.slot,
                        Map.of("CDC_SOURCE", "stream", "AURA_HISTORY_REFRESH_MS", "200"),
                        s.profiler(s.runDir.resolve("resume-compare.jfr")));
                WsClients clients = new WsClients(1)) {
            w.awaitActive();
            // warm-up: one turn of each mode, not reported
            for (boolean on : new boolean[] {false, true}) {
                turn(w, clients, on, rows, latencySeconds, "warm");
            }
            List<String> details = new ArrayList<>();
            double storedBytes = 0;
            double storedEvents = 0;
            for (int round = 0; round < r; round++) {
                boolean[] order = round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false};
                Turn[] t = new Turn[2];
                for (boolean on : order) {
                    t[on ? 1 : 0] = turn(w, clients, on, rows, latencySeconds, "r" + round);
                }
                Turn off = t[0];
                Turn on = t[1];
                String d = String.format("round %d (%s first)", round + 1, order[0] ? "on" : "off");
                tput.add(on.rate(), off.rate(), d);
                p99.add(
                                on.p99(),
                                off.p99(),
                                d
                                        + engaged(on)
                                        + (off.joins() > 1 ? "; resume off after " + off.joins() + " joins" : ""))
                        .metric("p50", on.p50())
                        .metric("off p50", off.p50())
                        .metric("added", on.p50() - off.p50());
                details.add(String.format(
                        "round %d: CPU ms per 1,000 rows drained: worker %.0f off / %.0f on, nats-server %.0f off / %.0f on",
                        round + 1,
                        off.workerCpuPer1k() * 1000,
                        on.workerCpuPer1k() * 1000,
                        off.natsCpuPer1k() * 1000,
                        on.natsCpuPer1k() * 1000));
                storedBytes += on.historyBytes();
                storedEvents += on.historyEvents();
            }
            details.forEach(report::note);
            double perEvent = storedEvents > 0 ? storedBytes / storedEvents : 0;
            report.note(String.format(
                    "resume cost per project: one JetStream stream (file storage by default) holding each change once,"
                            + " %,.0f bytes stored per change event here (this table's rows); the default"
                            + " postgres_changes_history_bytes (64 MiB) holds about %,.0f such changes, and the history"
                            + " also ends at window + 60 s. The worker's flush awaits the stream's acks (the throughput row);"
                            + " ws-front keeps one KV record per resumable channel, rewritten after each burst of frames"
                            + " (one put in flight per channel; the latency rows)",
                    perEvent, perEvent > 0 ? 64.0 * 1024 * 1024 / perEvent : 0));
        } finally {
            setResume(false);
        }
        s.stopFront();
        s.startWorker(Map.of(), List.of());
        s.awaitWorkerActive();

        report.row(
                tput,
                null,
                "resume off, same worker, alternating turns: median " + Report.f0(tput.medianBaseline()) + " rows/s",
                THROUGHPUT);
        report.row(
                p99,
                String.format(
                        "p50 median %.1f ms, %+.1f ms against resume off (median of the rounds' differences); p99 %+.1f ms",
                        p99.medianMetric("p50"), p99.medianMetric("added"), p99.median() - p99.medianBaseline()),
                String.format(
                        "resume off, same rounds: median p50 %.1f / p99 %.1f ms",
                        p99.medianMetric("off p50"), p99.medianBaseline()),
                P50_ADDED);
    }

    /** One turn in one mode. */
    private Turn turn(WarmProcess w, WsClients clients, boolean on, int rows, int seconds, String label)
            throws Exception {
        setResume(on);
        awaitStream(on);
        java.util.Set<String> recordsBefore = records.keys();
        long turnStartMs = System.currentTimeMillis();
        // a user of its own per turn: the same user would resume the previous turn's record and replay
        // what it missed (every change of the backlog turn is read from the history), not the steady state.
        // With resume on, ws-front claims the client's record at the join once it has seen the project's
        // window (it re-reads it every 200 ms): a join before that is tracked as in the previous mode, so it
        // is left and another new user joins (at most 5 times; the check after the turn says what happened)
        WsClients.Conn conn = null;
        int joins = 0;
        for (int attempt = 0; attempt < 5; attempt++) {
            joins++;
            if (conn != null) {
                conn.channel.close().await(5, TimeUnit.SECONDS);
                recordsBefore = records.keys();
                turnStartMs = System.currentTimeMillis();
            }
            conn = join(clients, USER + "-" + label + "-" + (on ? "on" : "off") + "-" + attempt);
            if (on
                    ? records.await(recordsBefore, turnStartMs, 3000)
                    : !records.await(recordsBefore, turnStartMs, 1000)) {
                break;
            }
        }
        try {
            // throughput: a backlog written while the worker is paused
            w.pause();
            long from = SlotPosition.walNow(s);
            cdc.writeBacklog(rows, true);
            counter.reset(w.origin, from);
            double workerCpu0 = Procs.cpuSeconds(w.pid());
            double natsCpu0 = Procs.cpuSeconds(s.nats.pid());
            long t0 = System.nanoTime();
            w.resume();
            boolean complete = counter.await(rows, 30_000, 600_000);
            long received = counter.count();
            double rate = complete ? rows / ((counter.lastNanos() - t0) / 1e9) : Double.NaN;
            double workerCpu = Procs.cpuSeconds(w.pid()) - workerCpu0;
            double natsCpu = Procs.cpuSeconds(s.nats.pid()) - natsCpu0;
            // latency at 1,000 rows/s
            String t = label + "-" + (on ? "on" : "off");
            Stats stats = new Stats();
            received(stats, t);
            long sent = LatencyBench.write(s, 1000, seconds, t);
            Progress.await(this.received::get, sent, Duration.ofSeconds(5), Duration.ofSeconds(60));
            tag = "";
            long got = this.received.get();
            // this turn's client, and only it, got a record (every turn's client is a new user)
            boolean record = records.appeared(recordsBefore, turnStartMs);
            String mode = on ? "resume on" : "resume off";
            Sample tputSample = Sample.of(rate)
                    .counted(rows, received)
                    .cpu(workerCpu)
                    .invalidIf(
                            on != record,
                            on
                                    ? "NO resume record for this turn's client"
                                    : "a resume record (window " + records.lastWindow() + " s) with " + mode);
            Sample p99 = Sample.of(stats.percentileMs(99))
                    .counted(sent, got)
                    .invalidIf(
                            on != record,
                            on
                                    ? "NO resume record for this turn's client"
                                    : "a resume record (window " + records.lastWindow() + " s) with " + mode);
            return new Turn(
                    tputSample,
                    p99,
                    stats.percentileMs(50),
                    on ? historyEvents() : 0,
                    on ? historyBytes() : 0,
                    record,
                    joins,
                    workerCpu * 1000 / rows,
                    natsCpu * 1000 / rows);
        } finally {
            conn.channel.close().await(5, TimeUnit.SECONDS);
        }
    }

    /** Starts counting the latency segment tagged {@code t} into {@code stats}. */
    private void received(Stats stats, String t) {
        received.set(0);
        ids = java.util.concurrent.ConcurrentHashMap.newKeySet();
        current = stats;
        tag = t;
    }

    private static String engaged(Turn on) {
        return String.format(
                "; history stream %,.0f events, %,.0f bytes stored per event; %s",
                on.historyEvents(),
                on.historyEvents() > 0 ? on.historyBytes() / on.historyEvents() : 0,
                (on.record()
                                ? "the turn's client had a resume record of its own"
                                : "NO resume record: ws-front did not track the client")
                        + (on.joins() > 1 ? " (after " + on.joins() + " joins of new users)" : ""));
    }

    /** Sets the project's resume window (0 = off). */
    private void setResume(boolean on) {
        s.pg.execute("INSERT INTO aura_platform.project_limits(project_id, postgres_changes_resume_seconds)"
                + " VALUES ('" + s.projectId + "', " + (on ? WINDOW_SECONDS : 0) + ")"
                + " ON CONFLICT (project_id) DO UPDATE SET postgres_changes_resume_seconds ="
                + " EXCLUDED.postgres_changes_resume_seconds, updated_at = now()");
    }

    /** Waits until the worker created (on) or deleted (off) the history stream, then for both services' refresh. */
    private void awaitStream(boolean on) {
        Waits.until(
                "the history stream " + (on ? "created" : "deleted") + " by the worker",
                Duration.ofSeconds(30),
                Duration.ofMillis(100),
                () -> historyEvents() >= 0 == on,
                () -> "");
        Procs.sleep(1000); // the worker's covered-projects set and ws-front's limits (200 ms refresh each)
    }

    private String streamName() {
        return "AURA_PGCHANGES_" + s.projectId.replace("-", "");
    }

    /** Events in the project's history stream, -1 when it does not exist. */
    private double historyEvents() {
        try {
            return s.client
                    .jetStreamManagement()
                    .getStreamInfo(streamName())
                    .getStreamState()
                    .getMsgCount();
        } catch (JetStreamApiException e) {
            return -1;
        } catch (Exception e) {
            throw new IllegalStateException("history stream unreadable", e);
        }
    }

    /** Bytes in the project's history stream, 0 when it does not exist. */
    private double historyBytes() {
        try {
            return s.client
                    .jetStreamManagement()
                    .getStreamInfo(streamName())
                    .getStreamState()
                    .getByteCount();
        } catch (JetStreamApiException e) {
            return 0;
        } catch (Exception e) {
            throw new IllegalStateException("history stream unreadable", e);
        }
    }

    /** A new connection joined to the latency table as a signed-in user; waits for the join's ok. */
    private WsClients.Conn join(WsClients clients, String user) throws Exception {
        WsClients.Conn conn = clients.connect(s.wsUri("1.0.0"), 0, this::onText);
        conn.open.get(30, TimeUnit.SECONDS);
        conn.send("{\"topic\":\"realtime:resume-lat\",\"event\":\"phx_join\",\"payload\":{\"config\":"
                + "{\"broadcast\":{\"self\":false,\"ack\":false},\"presence\":{\"key\":\"\"},"
                + "\"postgres_changes\":[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"" + LatencyBench.TABLE
                + "\"}]},\"access_token\":\"" + s.tokens.authenticated(s.projectId, user)
                + "\"},\"ref\":\"1\",\"join_ref\":\"1\"}");
        if (!conn.joined.get(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the latency client's join was refused");
        }
        return conn;
    }

    private void onText(WsClients.Conn conn, ByteBuf text) {
        long nowMicros = LatencyBench.micros(Instant.now());
        String frame = text.toString(StandardCharsets.UTF_8);
        if (!frame.contains("\"postgres_changes\"")) {
            return;
        }
        try {
            JsonNode data = Stack.JSON.readTree(frame).path("payload").path("data");
            String ts = data.path("commit_timestamp").asText(null);
            if (ts == null || !tag.equals(data.path("record").path("note").asText())) {
                return;
            }
            if (!ids.add(data.path("record").path("id").asLong(-1))) {
                return; // a copy of a row already counted
            }
            received.incrementAndGet();
            current.add(nowMicros - LatencyBench.micros(Instant.parse(ts)));
        } catch (Exception e) {
            System.err.println("resume latency: unreadable frame: " + e.getMessage());
        }
    }
}
