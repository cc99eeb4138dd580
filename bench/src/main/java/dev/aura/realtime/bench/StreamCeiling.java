package dev.aura.realtime.bench;

import dev.aura.realtime.testkit.PostgresServer;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.postgresql.replication.fluent.logical.ChainedLogicalStreamBuilder;

/**
 * The streaming ceiling of a backlog, measured without any of the product's code (issue 25): how
 * fast a replication client can take the backlog out of a wal2json slot with the worker's slot
 * options ({@code SlotReader.WAL2JSON_OPTIONS} in cdc-worker, plus {@code add-tables}) and its session settings.
 * Two independent clients read the same backlog, each from its own slot created before the
 * backlog was written:
 *
 * <ul>
 *   <li><b>pg_recvlogical</b> (Postgres's own C client, from the server's bin directory) with
 *       {@code --endpos} = the WAL flush position after the backlog, writing to {@code /dev/null}:
 *       timed from process start to its exit (it exits once it received everything up to the end
 *       position).
 *   <li><b>a blocking pgjdbc reader</b>: {@link PGReplicationStream#read()} in a tight loop (no
 *       sleeps, no decoding: it only counts the insert rows) until every insert arrived.
 * </ul>
 *
 * <p>The faster of the two is the ceiling a CDC rate is compared with. Usage, once per round:
 *
 * <pre>{@code
 * try (StreamCeiling ceiling = StreamCeiling.prepare(pg, "public.bench_cdc")) { // before the backlog
 *     writeBacklog(n);
 *     StreamCeiling.Result r = ceiling.measure(n); // consumes (and drops) its slots
 * }
 * }</pre>
 */
final class StreamCeiling implements AutoCloseable {
    private static final String RECV_SLOT = "bench_ceiling_recvlogical";
    private static final String JDBC_SLOT = "bench_ceiling_jdbc";
    /**
     * The worker's wal2json options, {@code SlotReader.WAL2JSON_OPTIONS} (cdc-worker is not on the
     * bench's class path: keep the two lists equal).
     */
    private static final Map<String, String> WAL2JSON_OPTIONS = wal2jsonOptions();

    private static Map<String, String> wal2jsonOptions() {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("format-version", "2");
        o.put("include-transaction", "1");
        o.put("include-timestamp", "1");
        o.put("include-type-oids", "1");
        o.put("include-types", "0");
        o.put("include-pk", "1");
        o.put("include-lsn", "1");
        o.put("include-xids", "1");
        return Collections.unmodifiableMap(o);
    }

    /** The worker's replication session settings ({@code SlotReader.SESSION}). */
    private static final String SESSION_OPTIONS = "-c DateStyle=ISO -c TimeZone=UTC -c extra_float_digits=3";

    private final PostgresServer pg;
    private final String addTables;
    private boolean slotsExist;

    /**
     * One reader's figure.
     *
     * @param rowsPerSecond inserts per second of wall time (connection set-up included)
     * @param seconds wall time
     * @param detail how it ended (exit code, rows seen)
     */
    record Reading(double rowsPerSecond, double seconds, String detail) {}

    /** Both readers on the same backlog. */
    record Result(Reading recvlogical, Reading blockingJdbc) {
        /** The faster client's rate: the ceiling. */
        double ceiling() {
            return Math.max(recvlogical.rowsPerSecond(), blockingJdbc.rowsPerSecond());
        }

        String fasterName() {
            return recvlogical.rowsPerSecond() >= blockingJdbc.rowsPerSecond()
                    ? "pg_recvlogical"
                    : "blocking pgjdbc reader";
        }

        String summary() {
            return String.format(
                    "pg_recvlogical %,.0f rows/s (%.2f s, %s); blocking pgjdbc read() %,.0f rows/s (%.2f s, %s)",
                    recvlogical.rowsPerSecond(),
                    recvlogical.seconds(),
                    recvlogical.detail(),
                    blockingJdbc.rowsPerSecond(),
                    blockingJdbc.seconds(),
                    blockingJdbc.detail());
        }
    }

    private StreamCeiling(PostgresServer pg, String addTables) {
        this.pg = pg;
        this.addTables = addTables;
    }

    /**
     * Creates the two ceiling slots; call it before the backlog is written.
     *
     * @param addTables wal2json {@code add-tables}, e.g. {@code public.bench_cdc}
     */
    static StreamCeiling prepare(PostgresServer pg, String addTables) {
        StreamCeiling c = new StreamCeiling(pg, addTables);
        pg.execute(
                "SELECT pg_create_logical_replication_slot('" + RECV_SLOT + "', 'wal2json')",
                "SELECT pg_create_logical_replication_slot('" + JDBC_SLOT + "', 'wal2json')");
        c.slotsExist = true;
        return c;
    }

    /**
     * Reads the backlog written since {@link #prepare} with both clients, one after the other, and
     * drops the slots.
     *
     * @param inserts the backlog's insert rows (the pgjdbc reader stops at the last one)
     */
    Result measure(long inserts) throws Exception {
        String end = pg.queryOne("SELECT pg_current_wal_flush_lsn()::text");
        Reading recv = recvlogical(end, inserts);
        Reading jdbc = blockingJdbc(inserts);
        close();
        return new Result(recv, jdbc);
    }

    private Reading recvlogical(String endLsn, long inserts) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(
                pg.binDir().resolve("pg_recvlogical").toString(),
                "--dbname=host=127.0.0.1 port=" + pg.port() + " user=postgres dbname=postgres",
                "--slot=" + RECV_SLOT,
                "--start",
                "--no-loop",
                "--endpos=" + endLsn,
                "--fsync-interval=0",
                "--file=/dev/null"));
        for (Map.Entry<String, String> o : WAL2JSON_OPTIONS.entrySet()) {
            cmd.add("--option=" + o.getKey() + "=" + o.getValue());
        }
        cmd.add("--option=add-tables=" + addTables);
        Path err = Files.createTempFile("pg_recvlogical", ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(err.toFile());
        pb.environment().put("PGOPTIONS", SESSION_OPTIONS);
        long t0 = System.nanoTime();
        Process p = pb.start();
        if (!p.waitFor(600, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("pg_recvlogical did not reach " + endLsn + " within 600 s");
        }
        double s = (System.nanoTime() - t0) / 1e9;
        String out = Files.readString(err).strip();
        Files.deleteIfExists(err);
        if (p.exitValue() != 0) {
            throw new IllegalStateException("pg_recvlogical exited " + p.exitValue() + ": " + out);
        }
        String confirmed = pg.queryOne(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '" + RECV_SLOT + "'");
        return new Reading(inserts / s, s, "exit 0 at --endpos " + endLsn + ", slot confirmed " + confirmed);
    }

    private Reading blockingJdbc(long inserts) throws SQLException {
        Properties props = new Properties();
        PGProperty.REPLICATION.set(props, "database");
        PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
        PGProperty.OPTIONS.set(props, SESSION_OPTIONS);
        long seen = 0;
        long messages = 0;
        long t0 = System.nanoTime();
        try (Connection c = DriverManager.getConnection(pg.jdbcUrl(), props)) {
            ChainedLogicalStreamBuilder b = c.unwrap(PGConnection.class)
                    .getReplicationAPI()
                    .replicationStream()
                    .logical()
                    .withSlotName(JDBC_SLOT)
                    .withStartPosition(LogSequenceNumber.INVALID_LSN)
                    .withStatusInterval(10, TimeUnit.SECONDS);
            WAL2JSON_OPTIONS.forEach(b::withSlotOption);
            b.withSlotOption("add-tables", addTables);
            try (PGReplicationStream st = b.start()) {
                while (seen < inserts) {
                    ByteBuffer m = st.read();
                    if (m == null) {
                        break; // the stream ended
                    }
                    messages++;
                    int at = m.arrayOffset() + m.position();
                    if (m.remaining() > 13 && m.array()[at + 11] == 'I') { // {"action":"I"
                        seen++;
                    }
                }
            }
        }
        double s = (System.nanoTime() - t0) / 1e9;
        if (seen != inserts) {
            throw new IllegalStateException("the blocking pgjdbc reader saw " + seen + " inserts, expected " + inserts);
        }
        return new Reading(inserts / s, s, messages + " messages incl. B/C");
    }

    /** Drops a slot once its walsender (a reader that just disconnected) is gone. */
    private static void drop(Statement st, String slot) throws SQLException {
        String where = " FROM pg_replication_slots WHERE slot_name = '" + slot + "'";
        for (int i = 0; ; i++) {
            try (ResultSet rs = st.executeQuery("SELECT active" + where)) {
                if (!rs.next()) {
                    return;
                }
                if (!rs.getBoolean(1)) {
                    break;
                }
            }
            if (i == 50) {
                st.execute("SELECT pg_terminate_backend(active_pid)" + where);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SQLException("interrupted while dropping " + slot, e);
            }
        }
        st.execute("SELECT pg_drop_replication_slot(slot_name)" + where);
    }

    /** Drops the ceiling's slots if {@link #measure} did not. */
    @Override
    public void close() throws SQLException {
        if (!slotsExist) {
            return;
        }
        slotsExist = false;
        try (Connection c = pg.connect();
                Statement st = c.createStatement()) {
            for (String slot : List.of(RECV_SLOT, JDBC_SLOT)) {
                drop(st, slot);
            }
        }
    }
}
