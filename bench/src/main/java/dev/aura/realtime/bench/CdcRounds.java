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
 * <p>Warm-up: two backlogs of each shape are drained by each reader first. The stream worker is
 * started after the first of them is written, so its drain is the cold-start figure (time from its
 * "started" log line; reported once, apart). Then {@code rounds} rounds, each of both shapes: the
 * ceilings ({@link BacklogCeiling}) and a raw peek read the backlog, then the three readers take
 * turns, their order rotated each round (stream, Debezium, poll; Debezium, poll, stream; ...). Each
 * reader's time runs from its resume to the last of its events at the NATS subscriber.
 *
 * <p>Each turn counts its own reader's events only ({@link ChangeCounter}: its {@code Aura-Origin},
 * distinct {@code Aura-Event-Id}s, LSNs from the backlog's start) and records them with the
 * reader's CPU and where its slot stood ({@link SlotPosition}: right after the backlog was written
 * and at its resume) in a {@link Sample}. A turn that did not receive all {@code n} events has no
 * rate (never n over the time of the last arrival) and makes its round invalid, as does a stream
 * turn faster than the round's ceiling or one whose CPU per row is far from the other rounds'.
 */
final class CdcRounds {
    /** The stream worker's name and {@code Aura-Origin}. */
    private static final String STREAM = "cdc-worker-stream";

    static final Target VS_CEILING = Target.of(Target.atLeast("ratio", "", 0.9, "× the streaming ceiling"));
    static final Target VS_DEBEZIUM = Target.of(Target.atLeast("ratio", "", 1.5, "× Debezium"));

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
                ceilings.add(new Rounds("ceiling " + c.label() + ", " + label, "rows/s", "raw peek"));
            }
        }
    }

    void run(int n, int rounds, int sqlOnlySeconds) throws Exception {
        WarmProcess.allowPauses(s);
        paused = new PausedReaders(s, w -> slotOf(name(w)), pauseWalSenders);
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
            pause(poll);
            WarmProcess dbz = peer.start(CdcThroughputBench.TABLE, s.profiler(s.runDir.resolve("debezium.jfr")));
            readers.put("Debezium", dbz);
            pause(dbz);

            // warm-up, single-row shape: the stream worker starts after the backlog (the cold figure)
            long coldFrom = SlotPosition.walNow(s);
            cdc.writeBacklog(n, true);
            counter.reset(STREAM, coldFrom);
            long startWall = System.currentTimeMillis();
            long offset = startWall * 1_000_000 - System.nanoTime();
            WarmProcess stream = WarmProcess.worker(s, STREAM, s.slot, Map.of("CDC_SOURCE", "stream"), jvm);
            readers.put("stream", stream);
            long readyWallMs = CdcThroughputBench.logTime(
                    stream.process.waitForLog(CdcThroughputBench.STARTED, Duration.ofSeconds(90)));
            boolean coldComplete = counter.await(n, 30_000, 600_000);
            long coldReceived = counter.count();
            long lastWallMs = (counter.lastNanos() + offset) / 1_000_000;
            double coldS = (lastWallMs - readyWallMs) / 1000.0;
            double coldJvmS = (lastWallMs - startWall) / 1000.0;
            pause(stream);
            StringBuilder warm =
                    new StringBuilder("CDC warm-up (untimed for the figures; two backlogs of each shape per reader): ");
            for (String r : List.of("Debezium", "poll")) {
                warm.append(r)
                        .append(' ')
                        .append(rate(turn(readers.get(r), n, coldFrom, null)))
                        .append(", ");
            }
            // then one more backlog of each shape for every reader: their JIT settles (its CPU counts in a
            // turn's, and a round whose CPU per row is far from its siblings' is invalid)
            for (boolean singleRow : new boolean[] {false, true, false}) {
                long from = SlotPosition.walNow(s);
                cdc.writeBacklog(n, singleRow);
                for (String r : List.of("stream", "Debezium", "poll")) {
                    warm.append(r)
                            .append(singleRow ? " " : " (one txn) ")
                            .append(rate(turn(readers.get(r), n, from, null)))
                            .append(", ");
                }
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
            report.info(
                    "1. CDC throughput, stream, COLD start (fresh JVM, one round), " + single.label,
                    coldComplete
                            ? Report.f0(n / coldS) + " rows/s (" + Report.f2(coldS) + " s from the \"started\" line; "
                                    + Report.f2(coldJvmS) + " s incl. JVM start)"
                            : "INCOMPLETE: " + coldReceived + " of " + n + " events arrived (no rate)",
                    "warm stream rounds of this run: median " + Report.f0(warmStream.median()) + " rows/s",
                    coldComplete ? Report.f2(n / coldS / warmStream.median()) + "× warm" : "–",
                    "– (reported: what a restart costs)");
            paused.note(report);
            if (s.profile) {
                for (WarmProcess w : readers.values()) {
                    resume(w);
                    Path f = s.runDir.resolve("profile-" + w.label.replaceAll("[^A-Za-z0-9.-]", "-") + ".jfr");
                    Procs.run(List.of(Procs.JDK + "jcmd", Long.toString(w.pid()), "JFR.dump", "filename=" + f));
                    report.evidence("CDC throughput (profiled run): " + w.label, JfrHotMethods.summarize(f, null, 8));
                }
            }
        } finally {
            paused.resumeWalSenders();
            readers.values().forEach(WarmProcess::close);
            peer.drop();
            s.pg.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '"
                    + pollSlot + "'");
        }
    }

    /** Whether a paused reader's walsender is paused too ({@code --no-walsender-pause}: not). */
    private boolean pauseWalSenders = true;

    private PausedReaders paused;

    CdcRounds pauseWalSenders(boolean on) {
        pauseWalSenders = on;
        return this;
    }

    private void pause(WarmProcess w) {
        paused.pause(w);
    }

    private void resume(WarmProcess w) {
        paused.resume(w);
    }

    private static String name(WarmProcess w) {
        return w.origin.equals(STREAM) ? "stream" : w.origin.equals(DebeziumPeer.ORIGIN) ? "Debezium" : "poll";
    }

    private final Map<String, Double> cumulativePolls = new LinkedHashMap<>();
    private final Map<String, Double> lastTurnPolls = new LinkedHashMap<>();

    /** "12,345 rows/s", or "INCOMPLETE (99,990/100,000)". */
    private static String rate(Sample t) {
        return Double.isNaN(t.value())
                ? "INCOMPLETE (" + t.received() + "/" + t.expected() + ")"
                : Report.f0(t.value()) + " rows/s";
    }

    /**
     * Resumes {@code reader}, waits for its {@code n} events (counted from it only, LSNs from
     * {@code from}) at the subscriber, pauses it. @return its rate (NaN unless all {@code n}
     * arrived), the count, its CPU and {@code start} (where its slot stood)
     */
    private Sample turn(WarmProcess reader, int n, long from, String start) {
        counter.reset(reader.origin, from);
        double cpu0 = Procs.cpuSeconds(reader.pid());
        long t0 = System.nanoTime();
        resume(reader);
        boolean complete = counter.await(n, 30_000, 600_000);
        long last = counter.lastNanos();
        long received = counter.count();
        if (reader.http != null) {
            // scraped while it runs (a paused process answers nothing); read rounds of this turn
            double polls = reader.metric("aura_cdc_polls_total");
            lastTurnPolls.put(reader.label, polls - cumulativePolls.getOrDefault(reader.label, 0.0));
            cumulativePolls.put(reader.label, polls);
        }
        double cpu = Procs.cpuSeconds(reader.pid()) - cpu0;
        pause(reader);
        if (!complete) {
            report.note(reader.label + ": only " + received + " of " + n + " events arrived before the stall"
                    + " timeout (" + counter.leftOut() + ")");
        }
        return Sample.of(complete ? n / ((last - t0) / 1e9) : Double.NaN)
                .counted(n, received)
                .cpu(cpu)
                .start(start);
    }

    /** The slot each reader reads (where {@link SlotPosition} looks). */
    private String slotOf(String reader) {
        return switch (reader) {
            case "stream" -> s.slot;
            case "poll" -> s.slot + "_poll";
            default -> DebeziumPeer.SLOT;
        };
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
        long from = SlotPosition.walNow(s);
        cdc.writeBacklog(n, shape.singleRow);
        long to = SlotPosition.walNow(s);
        double writeS = (System.nanoTime() - w0) / 1e9;
        // finding 4: how far each paused reader's walsender got while the backlog was written
        Map<String, SlotPosition> written = new LinkedHashMap<>();
        for (String r : order) {
            written.put(r, SlotPosition.of(s, slotOf(r)));
        }
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
        Map<String, Sample> turns = new LinkedHashMap<>();
        Map<String, String> polls = new LinkedHashMap<>();
        for (String r : order) {
            WarmProcess w = readers.get(r);
            SlotPosition atResume = SlotPosition.of(s, slotOf(r));
            paused.atResume(r, atResume, from, to);
            String start = "slot of the backlog after the write: "
                    + written.get(r).describe(from, to) + ", at its resume: " + atResume.describe(from, to);
            turns.put(r, turn(w, n, from, start));
            polls.put(
                    r,
                    w.http == null ? "" : String.format("%.0f read rounds", lastTurnPolls.getOrDefault(w.label, 0.0)));
        }
        String orderNote = "order " + String.join(", ", order);
        Sample stream = turns.get("stream").ceiling(ceiling[0]);
        shape.readers.get("stream").add(stream, Sample.of(ceiling[0]), polls.get("stream") + "; " + orderNote);
        shape.debezium.add(stream, turns.get("Debezium"), orderNote);
        shape.poll.add(turns.get("poll"), Sample.of(peekRate), polls.get("poll"));
        System.out.printf(
                "  round %d, %s (%.1f s: slots %.1f, write %.1f, ceilings from %.1f, readers from %.1f): stream %s, Debezium %s, poll %s; ceiling %,.0f, raw peek %,.0f (%s)%n",
                round + 1,
                shape.label,
                (System.nanoTime() - started) / 1e9,
                setupS,
                writeS,
                beforeCeilingS,
                beforeTurnsS,
                rate(stream),
                rate(turns.get("Debezium")),
                rate(turns.get("poll")),
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
                VS_CEILING);
        Rounds d = shape.debezium;
        report.row(
                d,
                null,
                "Debezium, same backlog, same round: median " + Report.f0(d.medianBaseline()) + " rows/s (rounds: "
                        + d.rounds.stream()
                                .map(r -> Report.f0(r.baseline().value()))
                                .reduce((a, b) -> a + " / " + b)
                                .orElse("")
                        + ")",
                VS_DEBEZIUM);
        report.info(
                shape.poll,
                null,
                "one raw peek of the same backlog, same round (pg_logical_slot_peek_changes, fetch 500)",
                "– (reported beside stream; no target)");
        for (int i = 0; i < shape.ceilings.size(); i++) {
            Rounds c = shape.ceilings.get(i);
            report.rounds.add(c);
            report.note(c.figure + ": " + c.summary() + ", " + c.ratioSummary() + " of the raw peek");
        }
    }
}
