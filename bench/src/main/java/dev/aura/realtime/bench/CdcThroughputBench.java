package dev.aura.realtime.bench;

import dev.aura.realtime.testkit.ServiceProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Figure 1 (CDC throughput) and the cdc-worker half of figure 4 (heap during a huge transaction).
 *
 * <p>Method: with the worker stopped, a second wal2json slot is created next to the worker's, a
 * backlog is written, the raw slot is peeked once with the worker's options (the physical limit:
 * Postgres decoding plus JDBC streaming), then the worker starts and we time from its
 * "started" log line (JVM start excluded, reported separately) to the last event at a NATS
 * subscriber.
 */
final class CdcThroughputBench {
    static final String TABLE = "bench_cdc";
    private static final String RAW_SLOT = "bench_raw";
    private static final Pattern STARTED = Pattern.compile("cdc-worker .* started");
    private static final Pattern LOG_TIME = Pattern.compile("^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z)");
    private static final String PEEK = """
            SELECT lsn::text, data FROM pg_logical_slot_peek_changes(?, ?::pg_lsn, NULL,
              'format-version', '2', 'include-transaction', '1', 'include-timestamp', '1',
              'include-type-oids', '1', 'include-types', '0', 'include-pk', '1', 'include-lsn', '1',
              'add-tables', ?)""";

    private final Stack s;
    private final ChangeCounter counter;
    private final Report report;

    CdcThroughputBench(Stack s, ChangeCounter counter, Report report) {
        this.s = s;
        this.counter = counter;
        this.report = report;
    }

    static void createTable(Stack s) {
        s.pg.execute(
                "CREATE TABLE " + s.table(TABLE) + " (id bigserial PRIMARY KEY, v int NOT NULL, body text NOT NULL)",
                "CREATE PROCEDURE " + s.schema + ".bench_fill(n int) LANGUAGE plpgsql AS $$ BEGIN FOR i IN 1..n LOOP "
                        + "INSERT INTO " + s.table(TABLE)
                        + "(v, body) VALUES (i, 'row number ' || i); COMMIT; END LOOP; END $$");
    }

    /**
     * One backlog run; {@code singleRowTxns} chooses n transactions of one row or one of n rows.
     * With a {@code peer}, Debezium reads the same backlog after the worker and the ratio of the
     * worker's rate to Debezium's is reported.
     */
    void run(
            int n,
            boolean singleRowTxns,
            double targetRatio,
            Map<String, String> env,
            int sqlOnlySeconds,
            DebeziumPeer peer)
            throws Exception {
        String label = (singleRowTxns ? "single-row txns" : "one " + n + "-row txn") + (env.isEmpty() ? "" : " " + env);
        s.stopWorker();
        s.pg.execute("SELECT pg_create_logical_replication_slot('" + RAW_SLOT + "', 'wal2json')");
        boolean stream = "stream".equals(env.getOrDefault("CDC_SOURCE", "stream"));
        // the stream source's ceiling: independent replication clients on the same backlog (issue 25)
        StreamCeiling ceiling = stream ? StreamCeiling.prepare(s.pg, s.schema + "." + TABLE) : null;
        if (peer != null) {
            peer.prepare(TABLE);
        }
        long w0 = System.nanoTime();
        writeBacklog(n, singleRowTxns);
        double writeS = (System.nanoTime() - w0) / 1e9;

        long r0 = System.nanoTime();
        long[] raw = rawPeek();
        double rawS = (System.nanoTime() - r0) / 1e9;
        StreamCeiling.Result ceil = ceiling == null ? null : ceiling.measure(n);
        long b0 = System.nanoTime();
        long[] batched = sqlOnlySeconds > 0 ? rawBatchedPolls(sqlOnlySeconds) : null;
        double batchedS = (System.nanoTime() - b0) / 1e9;
        s.pg.execute("SELECT pg_drop_replication_slot('" + RAW_SLOT + "')");
        if (raw[1] != n) {
            throw new IllegalStateException("raw peek saw " + raw[1] + " inserts, expected " + n);
        }

        String tag = (singleRowTxns ? "cdc-single" : "cdc-batch") + "-" + env.getOrDefault("CDC_SOURCE", "stream");
        Path jfr = s.runDir.resolve(tag + ".jfr");
        Result r = timeWorker(n, env, Stack.jfr(jfr), 600_000);
        double rawRate = n / rawS;
        double rate = n / r.seconds;
        // the stream source against the faster independent streaming client, the poll source against the raw peek
        double baseRate = ceil == null ? rawRate : ceil.ceiling();
        double ratio = rate / baseRate;
        report.row(
                "1. CDC throughput, " + n / 1000 + "k " + label,
                Report.f0(rate) + " rows/s (" + Report.f2(r.seconds) + " s; " + Report.f2(r.withJvmSeconds)
                        + " s incl. JVM start)",
                ceil == null
                        ? Report.f0(rawRate) + " rows/s raw peek (" + Report.f2(rawS) + " s, " + raw[0]
                                + " rows incl. B/C)"
                        : Report.f0(baseRate) + " rows/s streaming ceiling (" + ceil.fasterName() + ")",
                Report.f2(ratio) + "×",
                "≥ " + targetRatio + "× " + (ceil == null ? "raw" : "ceiling"),
                ratio >= targetRatio);
        if (ceil != null) {
            report.note(String.format(
                    "%s: streaming ceiling of the same backlog (same slot options, no product code): %s; raw peek %,.0f rows/s "
                            + "(%.2f s); ceiling ÷ raw peek %.2f×; the stream source reached %.2f× of the ceiling",
                    label, ceil.summary(), rawRate, rawS, ceil.ceiling() / rawRate, ratio));
        }
        if (peer != null) {
            DebeziumPeer.Result d;
            try {
                d = peer.drain(TABLE, n, counter, 600_000);
            } finally {
                peer.drop();
            }
            double dRate = n / d.seconds();
            report.row(
                    "1. peer: Debezium " + DebeziumPeer.VERSION + " embedded (pgoutput) → NATS, " + n / 1000 + "k "
                            + label,
                    Report.f0(dRate) + " rows/s (" + Report.f2(d.seconds()) + " s"
                            + (d.complete() ? "" : "; only " + d.received() + " of " + n + " arrived") + ")",
                    "cdc-worker " + Report.f0(rate) + " rows/s (same backlog, row above)",
                    Report.f2(rate / dRate) + "× (ours ÷ Debezium)",
                    "> 1× (ahead of Debezium)",
                    rate > dRate);
        }
        if (batched != null) {
            double sqlRate = batched[2] / batchedS;
            report.note(String.format(
                    "%s: the worker's SQL alone (peek upto_nchanges=1000 + pg_replication_slot_advance to the last "
                            + "commit; no Java processing), time-boxed: %d polls in %.1f s decoded %,d inserts = %,.0f rows/s (%.2f× the single raw "
                            + "peek); first poll %d ms, last poll %d ms: every peek re-decodes from restart_lsn",
                    label,
                    batched[1],
                    batchedS,
                    batched[2],
                    sqlRate,
                    sqlRate / rawRateOf(n, rawS),
                    batched[3],
                    batched[4]));
        }
        report.note(String.format(
                "%s: backlog written in %.1f s; worker read rounds %.0f, %.1f s inside them (sum of aura_cdc_poll_duration); %s",
                label, writeS, r.polls, r.pollSeconds, r.cpu));
        if (!r.complete) {
            report.note(label + ": only " + r.received + " of " + n + " events arrived before the stall timeout");
        }
        if (ratio < targetRatio) {
            report.evidence(
                    "CDC throughput miss (" + label + "): cdc-worker profile",
                    JfrHotMethods.summarize(jfr, null, 8)
                            + "\nPoll loop: " + Report.f0(r.polls) + " polls, " + Report.f2(r.pollSeconds)
                            + " s inside polls of "
                            + Report.f2(r.seconds) + " s. Reproduce: `jfr print --events jdk.ExecutionSample " + jfr
                            + "`.\n");
        }
    }

    /** Figure 4b: worker heap while a huge transaction streams through, with a fixed -Xmx. */
    void hugeTransactionHeap(int n) throws Exception {
        s.stopWorker();
        writeBacklog(n, false);
        Path gcLog = s.runDir.resolve("cdc-huge-gc.log");
        Files.deleteIfExists(gcLog);
        Result r = timeWorker(n, Map.of(), List.of("-Xmx256m", "-Xlog:gc:file=" + gcLog), 900_000);
        long[] peak = GcLog.peakMb(gcLog);
        report.row(
                "4b. cdc-worker heap, one " + n / 1000 + "k-row txn, -Xmx256m",
                (r.complete ? "all " + n + " events" : r.received + "/" + n + " events") + ", heap peak " + peak[0]
                        + " MB before GC, max live " + peak[1] + " MB after GC (" + peak[2] + " GCs)",
                "–",
                "–",
                "bounded (stays under -Xmx, no OOM)",
                r.complete && peak[0] <= 256);
        report.note(
                String.format("one %d-row txn: %.0f rows/s through the worker (%.1f s)", n, n / r.seconds, r.seconds));
    }

    /**
     * @param cpu CPU seconds during the run (from the "started" line to the last event) of the
     *     worker, its Postgres sessions (walsender or peek session), nats-server and this JVM (the
     *     subscriber)
     */
    record Result(
            boolean complete,
            long received,
            double seconds,
            double withJvmSeconds,
            double polls,
            double pollSeconds,
            String cpu) {}

    private Result timeWorker(int n, Map<String, String> env, List<String> jvmArgs, long maxMs) throws Exception {
        counter.reset();
        long startWall = System.currentTimeMillis();
        long offset = startWall * 1_000_000 - System.nanoTime(); // wall ns = nanoTime + offset
        ServiceProcess w = s.startWorker(env, jvmArgs);
        String line = w.waitForLog(STARTED, Duration.ofSeconds(90));
        long readyWallMs = logTime(line);
        long natsPid = s.nats.pid();
        long self = ProcessHandle.current().pid();
        double worker0 = Procs.cpuSeconds(w.pid());
        double nats0 = Procs.cpuSeconds(natsPid);
        double self0 = Procs.cpuSeconds(self);
        boolean complete = counter.await(n, 30_000, maxMs);
        double pgCpu = 0;
        try (Connection c = s.pg.connect();
                Statement st = c.createStatement();
                ResultSet rs = st.executeQuery(
                        "SELECT pid FROM pg_stat_activity WHERE application_name = 'aura-cdc-worker'")) {
            while (rs.next()) {
                pgCpu += Procs.cpuSeconds(rs.getLong(1));
            }
        }
        String cpu = String.format(
                "CPU s: worker %.1f, its Postgres sessions %.1f, nats-server %.1f, subscriber JVM %.1f",
                Procs.cpuSeconds(w.pid()) - worker0,
                pgCpu,
                Procs.cpuSeconds(natsPid) - nats0,
                Procs.cpuSeconds(self) - self0);
        long lastWallMs = (counter.lastNanos() + offset) / 1_000_000;
        double polls = s.workerMetric("aura_cdc_polls_total");
        double pollSeconds = s.workerMetric("aura_cdc_poll_duration_seconds_sum");
        s.stopWorker();
        return new Result(
                complete,
                counter.count(),
                (lastWallMs - readyWallMs) / 1000.0,
                (lastWallMs - startWall) / 1000.0,
                polls,
                pollSeconds,
                cpu);
    }

    static long logTime(String line) {
        Matcher m = LOG_TIME.matcher(line);
        if (!m.find()) {
            throw new IllegalStateException("no timestamp in log line: " + line);
        }
        return Instant.parse(m.group(1)).toEpochMilli();
    }

    void writeBacklog(int n, boolean singleRowTxns) {
        if (singleRowTxns) {
            s.pg.execute("CALL " + s.schema + ".bench_fill(" + n + ")");
        } else {
            s.pg.execute("INSERT INTO " + s.table(TABLE)
                    + "(v, body) SELECT g, 'row number ' || g FROM generate_series(1, " + n + ") g");
        }
    }

    private static double rawRateOf(int n, double seconds) {
        return n / seconds;
    }

    /**
     * The worker's polling SQL without the worker: peek with upto_nchanges = CDC_BATCH_SIZE (1000), then
     * advance the raw slot to the last commit row, until a peek returns fewer rows. Isolates what the
     * batch-and-advance design costs inside Postgres. Consumes the raw slot.
     *
     * @return {rows, polls, inserts, first poll ms, last poll ms}
     */
    private long[] rawBatchedPolls(int maxSeconds) throws Exception {
        long deadline = System.nanoTime() + maxSeconds * 1_000_000_000L;
        long inserts = 0;
        long firstPollMs = -1;
        long lastPollMs = -1;
        String peek = PEEK.replace("?::pg_lsn, NULL", "?::pg_lsn, 1000");
        long rows = 0;
        long polls = 0;
        try (Connection c = s.pg.connect()) {
            String upto = flushLsn(c);
            while (System.nanoTime() < deadline) {
                long p0 = System.nanoTime();
                Peek got = peekRaw(c, peek, upto);
                polls++;
                rows += got.rows();
                inserts += got.inserts();
                lastPollMs = (System.nanoTime() - p0) / 1_000_000;
                if (firstPollMs < 0) {
                    firstPollMs = lastPollMs;
                }
                if (got.rows() < 1000 || got.lastCommit() == null) {
                    break;
                }
                try (PreparedStatement adv = c.prepareStatement("SELECT pg_replication_slot_advance(?, ?::pg_lsn)")) {
                    adv.setString(1, RAW_SLOT);
                    adv.setString(2, got.lastCommit());
                    adv.execute();
                }
            }
        }
        return new long[] {rows, polls, inserts, firstPollMs, lastPollMs};
    }

    /** @return {all rows, insert rows} of one streamed peek of the raw slot up to the flush LSN */
    private long[] rawPeek() throws Exception {
        try (Connection c = s.pg.connect()) {
            Peek all = peekRaw(c, PEEK, flushLsn(c));
            return new long[] {all.rows(), all.inserts()};
        }
    }

    /** What one peek of the raw slot saw: rows (B/C included), inserts, and the last commit row's LSN. */
    private record Peek(long rows, long inserts, String lastCommit) {}

    /** One peek of the raw slot up to {@code upto}, streamed in a read transaction (a peek consumes nothing). */
    private Peek peekRaw(Connection c, String sql, String upto) throws SQLException {
        long rows = 0;
        long inserts = 0;
        String lastCommit = null;
        c.setAutoCommit(false);
        try (PreparedStatement ps = rawPeekStatement(c, sql, upto);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                rows++;
                String data = rs.getString(2);
                if (data.startsWith("{\"action\":\"C\"")) {
                    lastCommit = rs.getString(1);
                } else if (data.startsWith("{\"action\":\"I\"")) {
                    inserts++;
                }
            }
        } finally {
            c.rollback();
            c.setAutoCommit(true);
        }
        return new Peek(rows, inserts, lastCommit);
    }

    /** {@code pg_current_wal_flush_lsn()}, read before a peek as the worker does (docs/design.md C4). */
    private static String flushLsn(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
                ResultSet rs = st.executeQuery("SELECT pg_current_wal_flush_lsn()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** A peek of the raw slot up to {@code upto}, limited to the benchmark table, streamed 500 rows at a time. */
    private PreparedStatement rawPeekStatement(Connection c, String sql, String upto) throws SQLException {
        PreparedStatement ps = c.prepareStatement(sql);
        ps.setFetchSize(500);
        ps.setString(1, RAW_SLOT);
        ps.setString(2, upto);
        ps.setString(3, s.schema + "." + TABLE);
        return ps;
    }
}
