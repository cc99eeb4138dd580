package dev.aura.realtime.bench;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Figure 1, CDC throughput, in alternating rounds on warm processes (issue 25).
 *
 * <p>Three readers run side by side for the whole figure, each on a slot of its own: the cdc-worker
 * with {@code CDC_SOURCE=stream} (the product's default), a second cdc-worker with
 * {@code CDC_SOURCE=poll}, and Debezium's embedded engine in a JVM of its own ({@link DebeziumPeer}).
 * All get the same JVM flags (none; JFR only with {@code --profile}). Between their turns they are
 * paused ({@link WarmProcess}), so a backlog builds up for each while it is written.
 *
 * <p>Warm-up: one backlog of each shape is drained by each reader first. The stream worker is
 * started after the first of them is written, so its drain is the cold-start figure (time from its
 * "started" log line; reported once, apart). Then {@code rounds} rounds, each of both shapes: the
 * ceilings ({@link BacklogCeiling}) and a raw peek read the backlog, then the three readers take
 * turns, their order rotated each round (stream, Debezium, poll; Debezium, poll, stream; ...). Each
 * reader's time runs from its resume to the last of its events at the NATS subscriber.
 */
final class CdcRounds {
    private final Stack s;
    private final ChangeCounter counter;
    private final Report report;
    private final CdcThroughputBench cdc;
    private final List<BacklogCeiling> ceilings;

    /** @param ceilings the figure's baseline first, then any reported beside it */
    CdcRounds(Stack s, ChangeCounter counter, Report report, List<BacklogCeiling> ceilings) {
        this.s = s;
        this.counter = counter;
        this.report = report;
        this.cdc = new CdcThroughputBench(s, counter, report);
        this.ceilings = ceilings;
    }

    /** Per shape: each reader's rounds and each ceiling's. */
    private static final class Shape {
        final boolean singleRow;
        final String label;
        final Map<String, Rounds> readers = new LinkedHashMap<>();
        final Rounds debezium;
        final Rounds poll;
        final List<Rounds> ceilings = new ArrayList<>();

        Shape(boolean singleRow, int n, List<BacklogCeiling> cs) {
            this.singleRow = singleRow;
            this.label = n / 1000 + "k " + (singleRow ? "single-row txns" : "rows in one txn");
            readers.put(
                    "stream",
                    new Rounds(
                            "1. CDC throughput, stream (warm), " + label,
                            "rows/s",
                            cs.get(0).label()));
            debezium = new Rounds(
                    "1. CDC stream vs Debezium " + DebeziumPeer.VERSION + " (own JVM and NATS connection), " + label,
                    "rows/s",
                    "Debezium");
            poll = new Rounds("1. CDC throughput, poll (warm), " + label, "rows/s", "raw peek");
            for (BacklogCeiling c : cs) {
                ceilings.add(new Rounds("ceiling " + c.label() + ", " + label, "rows/s", null));
            }
        }
    }

    void run(int n, int rounds, int sqlOnlySeconds) throws Exception {
        WarmProcess.allowPauses(s);
        s.stopWorker();
        List<String> jvm = s.profiler(s.runDir.resolve("cdc-stream.jfr"));
        DebeziumPeer peer = new DebeziumPeer(s);
        peer.prepare(CdcThroughputBench.TABLE);
        String pollSlot = s.slot + "_poll";
        Map<String, WarmProcess> readers = new LinkedHashMap<>();
        try {
            WarmProcess poll = WarmProcess.worker(
                    s,
                    "cdc-worker-poll",
                    pollSlot,
                    Map.of("CDC_SOURCE", "poll"),
                    s.profiler(s.runDir.resolve("cdc-poll.jfr")));
            readers.put("poll", poll);
            poll.awaitActive();
            poll.pause();
            WarmProcess dbz = peer.start(CdcThroughputBench.TABLE, s.profiler(s.runDir.resolve("debezium.jfr")));
            readers.put("Debezium", dbz);
            dbz.pause();

            // warm-up, single-row shape: the stream worker starts after the backlog (the cold figure)
            cdc.writeBacklog(n, true);
            counter.reset();
            long startWall = System.currentTimeMillis();
            long offset = startWall * 1_000_000 - System.nanoTime();
            WarmProcess stream =
                    WarmProcess.worker(s, "cdc-worker-stream", s.slot, Map.of("CDC_SOURCE", "stream"), jvm);
            readers.put("stream", stream);
            long readyWallMs = CdcThroughputBench.logTime(
                    stream.process.waitForLog(CdcThroughputBench.STARTED, Duration.ofSeconds(90)));
            boolean coldComplete = counter.await(n, 30_000, 600_000);
            long lastWallMs = (counter.lastNanos() + offset) / 1_000_000;
            double coldS = (lastWallMs - readyWallMs) / 1000.0;
            double coldJvmS = (lastWallMs - startWall) / 1000.0;
            stream.pause();
            StringBuilder warm =
                    new StringBuilder("CDC warm-up (untimed for the figures; one backlog of each shape per reader): ");
            for (String r : List.of("Debezium", "poll")) {
                warm.append(r)
                        .append(' ')
                        .append(Report.f0(n / turn(readers.get(r), n)))
                        .append(" rows/s, ");
            }
            cdc.writeBacklog(n, false);
            for (String r : List.of("stream", "Debezium", "poll")) {
                warm.append(r)
                        .append(" (one txn) ")
                        .append(Report.f0(n / turn(readers.get(r), n)))
                        .append(" rows/s, ");
            }
            report.note(warm.substring(0, warm.length() - 2));

            Shape single = new Shape(true, n, ceilings);
            Shape batch = new Shape(false, n, ceilings);
            List<String> order = new ArrayList<>(List.of("stream", "Debezium", "poll"));
            for (int round = 0; round < rounds; round++) {
                for (Shape shape : List.of(single, batch)) {
                    round(shape, n, round, order, readers, round == 0 && shape.singleRow ? sqlOnlySeconds : 0);
                }
                order.add(order.remove(0));
            }
            for (Shape shape : List.of(single, batch)) {
                report(shape);
            }
            Rounds warmStream = single.readers.get("stream");
            report.row(
                    "1. CDC throughput, stream, COLD start (fresh JVM, one round), " + single.label,
                    Report.f0(n / coldS) + " rows/s (" + Report.f2(coldS) + " s from the \"started\" line; "
                            + Report.f2(coldJvmS) + " s incl. JVM start"
                            + (coldComplete ? "" : "; only " + counter.count() + " of " + n + " arrived") + ")",
                    "warm stream rounds of this run: median " + Report.f0(warmStream.median()) + " rows/s",
                    Report.f2(n / coldS / warmStream.median()) + "× warm",
                    "– (reported: what a restart costs)",
                    null);
            if (s.profile) {
                for (WarmProcess w : readers.values()) {
                    w.resume();
                    Path f = s.runDir.resolve("profile-" + w.label.replaceAll("[^A-Za-z0-9.-]", "-") + ".jfr");
                    Procs.run(List.of(Procs.JDK + "jcmd", Long.toString(w.pid()), "JFR.dump", "filename=" + f));
                    report.evidence("CDC throughput (profiled run): " + w.label, JfrHotMethods.summarize(f, null, 8));
                }
            }
        } finally {
            readers.values().forEach(WarmProcess::close);
            peer.drop();
            s.pg.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"
                    + pollSlot + "'");
        }
    }

    private final Map<String, Double> cumulativePolls = new LinkedHashMap<>();
    private final Map<String, Double> lastTurnPolls = new LinkedHashMap<>();

    /** Resumes {@code reader}, waits for its {@code n} events at the subscriber, pauses it; @return seconds */
    private double turn(WarmProcess reader, int n) {
        counter.reset();
        long t0 = System.nanoTime();
        reader.resume();
        boolean complete = counter.await(n, 30_000, 600_000);
        long last = counter.lastNanos();
        if (reader.http != null) {
            // scraped while it runs (a paused process answers nothing); read rounds of this turn
            double polls = reader.metric("aura_cdc_polls_total");
            lastTurnPolls.put(reader.label, polls - cumulativePolls.getOrDefault(reader.label, 0.0));
            cumulativePolls.put(reader.label, polls);
        }
        reader.pause();
        if (!complete) {
            report.note(reader.label + ": only " + counter.count() + " of " + n
                    + " events arrived before the stall timeout");
        }
        return (last - t0) / 1e9;
    }

    private void round(
            Shape shape, int n, int round, List<String> order, Map<String, WarmProcess> readers, int sqlOnlySeconds)
            throws Exception {
        long started = System.nanoTime();
        s.pg.execute("SELECT pg_create_logical_replication_slot('" + CdcThroughputBench.RAW_SLOT + "', 'wal2json')");
        for (BacklogCeiling c : ceilings) {
            c.prepare();
        }
        double setupS = (System.nanoTime() - started) / 1e9;
        long w0 = System.nanoTime();
        cdc.writeBacklog(n, shape.singleRow);
        double writeS = (System.nanoTime() - w0) / 1e9;
        long r0 = System.nanoTime();
        long[] raw = cdc.rawPeek();
        double peekRate = n / ((System.nanoTime() - r0) / 1e9);
        if (sqlOnlySeconds > 0) {
            long b0 = System.nanoTime();
            long[] b = cdc.rawBatchedPolls(sqlOnlySeconds);
            double secs = (System.nanoTime() - b0) / 1e9;
            report.note(String.format(
                    "%s: the worker's SQL alone (peek upto_nchanges=1000 + pg_replication_slot_advance to the last "
                            + "commit; no Java processing), time-boxed: %d polls in %.1f s decoded %,d inserts = %,.0f rows/s "
                            + "(%.2f× the raw peek); first poll %d ms, last poll %d ms",
                    shape.label, b[1], secs, b[2], b[2] / secs, b[2] / secs / peekRate, b[3], b[4]));
        }
        s.pg.execute("SELECT pg_drop_replication_slot('" + CdcThroughputBench.RAW_SLOT + "')");
        if (raw[1] != n) {
            throw new IllegalStateException("raw peek saw " + raw[1] + " inserts, expected " + n);
        }
        double beforeCeilingS = (System.nanoTime() - started) / 1e9;
        double[] ceiling = new double[ceilings.size()];
        for (int i = 0; i < ceilings.size(); i++) {
            ceiling[i] = n / ceilings.get(i).drainSeconds(n);
            shape.ceilings.get(i).add(ceiling[i], peekRate, ceilings.get(i).lastDetail());
        }
        double beforeTurnsS = (System.nanoTime() - started) / 1e9;
        Map<String, Double> rate = new LinkedHashMap<>();
        Map<String, String> cpu = new LinkedHashMap<>();
        for (String r : order) {
            WarmProcess w = readers.get(r);
            double c0 = Procs.cpuSeconds(w.pid());
            rate.put(r, n / turn(w, n));
            cpu.put(
                    r,
                    String.format("CPU %.1f s", Procs.cpuSeconds(w.pid()) - c0)
                            + (w.http == null
                                    ? ""
                                    : String.format(", %.0f read rounds", lastTurnPolls.getOrDefault(w.label, 0.0))));
        }
        String orderNote = "order " + String.join(", ", order);
        shape.readers.get("stream").add(rate.get("stream"), ceiling[0], cpu.get("stream") + "; " + orderNote);
        shape.debezium.add(rate.get("stream"), rate.get("Debezium"), "Debezium " + cpu.get("Debezium"));
        shape.poll.add(rate.get("poll"), peekRate, cpu.get("poll"));
        System.out.printf(
                "  round %d, %s (%.1f s: slots %.1f, write %.1f, ceilings from %.1f, readers from %.1f): stream %,.0f, Debezium %,.0f, poll %,.0f rows/s; ceiling %,.0f, raw peek %,.0f (%s)%n",
                round + 1,
                shape.label,
                (System.nanoTime() - started) / 1e9,
                setupS,
                writeS,
                beforeCeilingS,
                beforeTurnsS,
                rate.get("stream"),
                rate.get("Debezium"),
                rate.get("poll"),
                ceiling[0],
                peekRate,
                orderNote);
    }

    private void report(Shape shape) {
        Rounds stream = shape.readers.get("stream");
        Rounds ceiling = shape.ceilings.get(0);
        report.row(
                stream,
                null,
                ceilings.get(0).label() + " of the same backlog, same round: " + ceiling.summary(),
                "≥ 0.9× the streaming ceiling (median)",
                Rounds.atLeast(stream.medianRatio(), 0.9));
        Rounds d = shape.debezium;
        report.row(
                d,
                null,
                "Debezium, same backlog, same round: median " + Report.f0(d.medianBaseline()) + " rows/s (rounds: "
                        + d.rounds.stream()
                                .map(r -> Report.f0(r.baseline()))
                                .reduce((a, b) -> a + " / " + b)
                                .orElse("")
                        + ")",
                "≥ 1.5× Debezium (median of ours ÷ Debezium)",
                Rounds.atLeast(d.medianRatio(), 1.5));
        report.row(
                shape.poll,
                null,
                "one raw peek of the same backlog, same round (pg_logical_slot_peek_changes, fetch 500)",
                "– (reported beside stream; no target)",
                null);
        for (int i = 0; i < shape.ceilings.size(); i++) {
            Rounds c = shape.ceilings.get(i);
            report.rounds.add(c);
            report.note(c.figure + ": " + c.summary() + ", " + c.ratioSummary() + " of the raw peek");
        }
    }
}
