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
 * <p>The backlog, the raw peek (the poll source's baseline: Postgres decoding plus JDBC streaming,
 * one peek with the worker's options) and the worker's SQL alone; the timed rounds of figure 1
 * are {@link CdcRounds}.
 */
final class CdcThroughputBench {
    static final String TABLE = "bench_cdc";
    static final String RAW_SLOT = "bench_raw";
    static final Pattern STARTED = Pattern.compile("cdc-worker .* started");
    private static final Pattern LOG_TIME = Pattern.compile("^(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z)");
    private static final String PEEK = """
            SELECT lsn::text, data FROM pg_logical_slot_peek_changes(?, ?::pg_lsn, NULL,
              'format-version', '2', 'include-transaction', '1', 'include-timestamp', '1',
              'include-type-oids', '1', 'include-types', '0', 'include-pk', '1', 'include-lsn', '1',
              'include-xids', '1', 'add-tables', ?)""";

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

    /** Figure 4b's heap: {@link #HEAP_BOUND_MB} is far under it, so the bound is something the worker must keep. */
    static final int HEAP_MAX_MB = 1024;

    /**
     * Figure 4b's bound on the live heap: twice {@code CDC_BUFFER_BYTES} (64 MiB, the heap for changes
     * between the slot and NATS's confirmation), in MB; a worker that held the transaction would pass it.
     */
    static final int HEAP_BOUND_MB = 128;

    static final Target HUGE_TXN = Target.of(
            Target.atMost("live", "max live heap (after a forced full GC)", HEAP_BOUND_MB, "MB"),
            Target.atMost("missing", "events not received", 0, ""));

    /**
     * Figure 4b (issue 39: a bound that can fail): worker heap while a huge transaction streams
     * through. The worker runs with {@code -Xmx}{@value #HEAP_MAX_MB}m, so its heap could grow far
     * past {@value #HEAP_BOUND_MB} MB; the live heap is read every 2 s during the drain after a forced
     * full GC ({@code jcmd GC.run}, then {@code GC.heap_info}), and the GC log's peaks are reported beside it.
     */
    void hugeTransactionHeap(int n) throws Exception {
        s.stopWorker();
        long from = SlotPosition.walNow(s);
        writeBacklog(n, false);
        long walBytes = SlotPosition.walNow(s) - from;
        Path gcLog = s.runDir.resolve("cdc-huge-gc.log");
        Files.deleteIfExists(gcLog);
        java.util.concurrent.atomic.AtomicLong live = new java.util.concurrent.atomic.AtomicLong(-1);
        java.util.concurrent.atomic.AtomicInteger samples = new java.util.concurrent.atomic.AtomicInteger();
        Result r = timeWorker(
                n, from, Map.of(), List.of("-Xmx" + HEAP_MAX_MB + "m", "-Xlog:gc:file=" + gcLog), 900_000, pid -> {
                    Thread t = Thread.ofPlatform()
                            .daemon()
                            .name("bench-heap-sampler")
                            .start(() -> {
                                while (!Thread.currentThread().isInterrupted()) {
                                    try {
                                        live.accumulateAndGet(Procs.heapUsedAfterGc(pid), Math::max);
                                        samples.incrementAndGet();
                                        Thread.sleep(2000);
                                    } catch (InterruptedException e) {
                                        return;
                                    } catch (RuntimeException gone) {
                                        return; // the worker stopped
                                    }
                                }
                            });
                    return t::interrupt;
                });
        long[] peak = GcLog.peakMb(gcLog);
        double liveMb = live.get() < 0 ? Double.NaN : live.get() / 1e6;
        report.row(
                "4b. cdc-worker heap, one " + n / 1000 + "k-row txn (" + SlotPosition.mb(walBytes) + " of WAL), -Xmx"
                        + HEAP_MAX_MB + "m",
                String.format(
                        "%d/%d events; max live heap %.0f MB (after a forced full GC, %d samples 2 s apart); GC log:"
                                + " peak %d MB before a GC, %d MB after (%d GCs)",
                        r.received, n, liveMb, samples.get(), peak[0], peak[1], peak[2]),
                "– (no baseline: a bound, not a rate: the live heap must stay under a bound set by the worker's"
                        + " buffers, with room to exceed it)",
                "–",
                HUGE_TXN,
                HUGE_TXN.judgeOnce(Map.of("live", liveMb, "missing", (double) (n - r.received))));
        report.note(String.format(
                "one %d-row txn: %.0f rows/s through the worker (%.1f s; slowed by the forced GCs of figure 4b)",
                n, n / r.seconds, r.seconds));
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

    /**
     * Starts the worker, waits for its {@code n} events (LSNs from {@code from}), stops it.
     *
     * @param whileDraining started with the worker's pid once it is up; closed when the drain ended
     */
    private Result timeWorker(
            int n,
            long from,
            Map<String, String> env,
            List<String> jvmArgs,
            long maxMs,
            java.util.function.LongFunction<Runnable> whileDraining)
            throws Exception {
        counter.reset(Stack.WORKER_ORIGIN, from);
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
        Runnable stopSampling = whileDraining.apply(w.pid());
        boolean complete = counter.await(n, 30_000, maxMs);
        stopSampling.run();
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

    /**
     * The worker's polling SQL without the worker: peek with upto_nchanges = CDC_BATCH_SIZE (1000), then
     * advance the raw slot to the last commit row, until a peek returns fewer rows. Isolates what the
     * batch-and-advance design costs inside Postgres. Consumes the raw slot.
     *
     * @return {rows, polls, inserts, first poll ms, last poll ms}
     */
    long[] rawBatchedPolls(int maxSeconds) throws Exception {
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
    long[] rawPeek() throws Exception {
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
