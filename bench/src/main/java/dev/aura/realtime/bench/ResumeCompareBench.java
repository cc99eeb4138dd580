package dev.aura.realtime.bench;

import dev.aura.realtime.testkit.ServiceProcess;
import io.nats.client.JetStreamApiException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Issue 27's cost, figures 1 and 2 with postgres_changes resume off and on in the same run
 * ({@code scripts/bench.sh --resume-compare}): the CDC throughput of a backlog of single-row
 * transactions (the worker started on it, "started" log line to the last event at a NATS
 * subscriber, as {@link CdcThroughputBench} times it) and the commit→client latency at 1,000
 * rows/s ({@link LatencyBench}, stream source). Each round runs resume off, then on (the project's
 * {@code postgres_changes_resume_seconds} set to 0, then 120, the worker and ws-front restarted
 * between); at least two rounds; the medians are compared. Each latency figure follows a
 * discarded warm-up run of the same length on the freshly started services. With resume on, the worker publishes
 * to JetStream and its flush awaits the history's acks, which is what this prices.
 *
 * <p>The latency client joins with the anon key (no {@code sub}): ws-front keeps no resume record
 * for it, so the record's KV puts are not in these figures (they happen after the socket write).
 */
final class ResumeCompareBench {
    static final int WINDOW_SECONDS = 60;
    private static final Pattern STARTED = Pattern.compile("cdc-worker .* started");
    private static final Pattern PERCENTILES = Pattern.compile("p50 ([\\d.,]+) / p95 ([\\d.,]+) / p99 ([\\d.,]+) ms");

    private final Stack s;
    private final ChangeCounter counter;
    private final Report report;

    ResumeCompareBench(Stack s, ChangeCounter counter, Report report) {
        this.s = s;
        this.counter = counter;
        this.report = report;
    }

    /** {@code rounds} (≥ 2) of off-then-on; {@code rows} per throughput backlog, {@code latencySeconds} per latency run. */
    void run(int rows, int latencySeconds, int rounds) throws Exception {
        int r = Math.max(2, rounds);
        List<Double> offRates = new ArrayList<>();
        List<Double> onRates = new ArrayList<>();
        List<double[]> offLat = new ArrayList<>();
        List<double[]> onLat = new ArrayList<>();
        s.stopFront();
        for (int round = 1; round <= r; round++) {
            for (boolean on : new boolean[] {false, true}) {
                setResume(on);
                double rate = throughput(rows, on);
                (on ? onRates : offRates).add(rate);
                double[] lat = latency(latencySeconds);
                (on ? onLat : offLat).add(lat);
                report.note(String.format(
                        "resume %s, round %d: %,.0f rows/s (%dk single-row txns); latency @ 1,000 rows/s p50 %.1f /"
                                + " p99 %.1f ms%s",
                        on ? "on" : "off", round, rate, rows / 1000, lat[0], lat[2], on ? historyNote() : ""));
            }
        }
        setResume(false);
        s.startWorker(Map.of(), List.of());
        s.awaitWorkerActive();

        // the box's load drifts between rounds: the per-round (paired) ratios are the steadier figure
        List<Double> paired = new ArrayList<>();
        List<Double> pairedP50 = new ArrayList<>();
        for (int i = 0; i < r; i++) {
            paired.add(onRates.get(i) / offRates.get(i));
            pairedP50.add(onLat.get(i)[0] - offLat.get(i)[0]);
        }
        report.note(String.format(
                "resume on/off per round: throughput ratios %s (median %.2f×); latency p50 added %s ms (median %+.1f ms)",
                paired.stream().map(v -> String.format("%.2f", v)).toList(),
                median(paired),
                pairedP50.stream().map(v -> String.format("%+.1f", v)).toList(),
                median(pairedP50)));
        double off = median(offRates);
        double onRate = median(onRates);
        double loss = 1 - onRate / off;
        report.row(
                "27. CDC throughput, " + rows / 1000 + "k single-row txns, resume on",
                Report.f0(onRate) + " rows/s (median of " + r + ")",
                "resume off " + Report.f0(off) + " rows/s (median of " + r + ", same run)",
                String.format("%.2f× (%+.1f %%)", onRate / off, -100 * loss),
                "≤ 10 % fewer rows/s",
                loss <= 0.10);
        double offP50 = median(offLat.stream().map(l -> l[0]).toList());
        double onP50 = median(onLat.stream().map(l -> l[0]).toList());
        double offP99 = median(offLat.stream().map(l -> l[2]).toList());
        double onP99 = median(onLat.stream().map(l -> l[2]).toList());
        report.row(
                "27. commit→client latency @ 1,000 rows/s, resume on",
                String.format("p50 %.1f / p99 %.1f ms (medians of %d)", onP50, onP99, r),
                String.format("resume off p50 %.1f / p99 %.1f ms", offP50, offP99),
                String.format("%+.1f ms p50, %+.1f ms p99", onP50 - offP50, onP99 - offP99),
                "≤ 5 ms p50 added",
                onP50 - offP50 <= 5);
    }

    /** Sets the project's resume window (0 = off); the services are (re)started after it by the caller's steps. */
    private void setResume(boolean on) {
        s.stopWorker();
        s.stopFront();
        s.pg.execute("INSERT INTO aura_platform.project_limits(project_id, postgres_changes_resume_seconds)"
                + " VALUES ('" + s.projectId + "', " + (on ? WINDOW_SECONDS : 0) + ")"
                + " ON CONFLICT (project_id) DO UPDATE SET postgres_changes_resume_seconds ="
                + " EXCLUDED.postgres_changes_resume_seconds, updated_at = now()");
    }

    /** Figure 1's method on a backlog of {@code n} single-row transactions; rows/s. */
    private double throughput(int n, boolean on) throws Exception {
        s.stopWorker();
        new CdcThroughputBench(s, counter, report).writeBacklog(n, true);
        counter.reset();
        long offset = System.currentTimeMillis() * 1_000_000 - System.nanoTime();
        ServiceProcess w = s.startWorker(Map.of(), List.of());
        long readyWallMs = CdcThroughputBench.logTime(w.waitForLog(STARTED, Duration.ofSeconds(90)));
        boolean complete = counter.await(n, 30_000, 600_000);
        long lastWallMs = (counter.lastNanos() + offset) / 1_000_000;
        s.stopWorker();
        if (!complete) {
            report.note("resume " + (on ? "on" : "off") + ": only " + counter.count() + " of " + n
                    + " events arrived before the stall timeout");
        }
        return counter.count() / ((lastWallMs - readyWallMs) / 1000.0);
    }

    /** Figure 2's method at 1,000 rows/s (stream source, Java WS client); {p50, p95, p99} ms. */
    private double[] latency(int seconds) throws Exception {
        s.startWorker(Map.of(), List.of());
        s.awaitWorkerActive();
        s.startFront(Map.of(), List.of());
        Report scratch = new Report();
        try {
            // the first run warms the freshly started JVMs up and is discarded
            new LatencyBench(s, scratch, "stream").run(new int[] {1000, 1000}, seconds, false);
        } finally {
            s.stopFront();
            s.stopWorker();
        }
        String measured = scratch.rows.getLast().measured();
        Matcher m = PERCENTILES.matcher(measured);
        if (!m.find()) {
            throw new IllegalStateException("no percentiles in the latency figure: " + measured);
        }
        return new double[] {number(m.group(1)), number(m.group(2)), number(m.group(3))};
    }

    /** What the project's history stream holds, to show resume was engaged in an "on" run. */
    private String historyNote() {
        String name = "AURA_PGCHANGES_" + s.projectId.replace("-", "");
        try {
            var state = s.client.jetStreamManagement().getStreamInfo(name).getStreamState();
            return String.format(
                    "; history %s: %,d events, %,d bytes", name, state.getMsgCount(), state.getByteCount());
        } catch (JetStreamApiException e) {
            return "; NO history stream " + name + " (" + e.getMessage() + "): resume was not engaged";
        } catch (Exception e) {
            return "; history stream unreadable: " + e;
        }
    }

    private static double number(String s) {
        return Double.parseDouble(s.replace(',', '.'));
    }

    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
