package dev.aura.realtime.bench;

import java.sql.Connection;
import java.util.Properties;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.PGReplicationStream;

/**
 * The raw replication stream: what pgjdbc and the walsender deliver, with the worker's wal2json
 * options and nothing done to the rows ({@code readPending} polled, 1 ms sleep when empty). The
 * default {@link BacklogCeiling} of figure 1 until an independent one replaces it.
 */
final class RawStreamCeiling implements BacklogCeiling {
    private static final String SLOT = "bench_raw_stream";
    private final Stack s;
    private final String table;

    RawStreamCeiling(Stack s, String table) {
        this.s = s;
        this.table = table;
    }

    @Override
    public String label() {
        return "raw pgjdbc stream (readPending, no processing)";
    }

    @Override
    public void prepare() {
        s.pg.execute("SELECT pg_create_logical_replication_slot('" + SLOT + "', 'wal2json')");
    }

    @Override
    public double drainSeconds(int n) throws Exception {
        long t0 = System.nanoTime();
        Properties props = new Properties();
        PGProperty.REPLICATION.set(props, "database");
        PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
        try (Connection c = java.sql.DriverManager.getConnection(s.pg.jdbcUrl(), props)) {
            PGReplicationStream st = c.unwrap(PGConnection.class)
                    .getReplicationAPI()
                    .replicationStream()
                    .logical()
                    .withSlotName(SLOT)
                    .withSlotOption("format-version", "2")
                    .withSlotOption("include-transaction", "1")
                    .withSlotOption("include-timestamp", "1")
                    .withSlotOption("include-type-oids", "1")
                    .withSlotOption("include-types", "0")
                    .withSlotOption("include-pk", "1")
                    .withSlotOption("include-lsn", "1")
                    .withSlotOption("add-tables", s.schema + "." + table)
                    .start();
            long inserts = 0;
            long deadline = System.nanoTime() + 300_000_000_000L;
            while (inserts < n && System.nanoTime() < deadline) {
                java.nio.ByteBuffer b = st.readPending();
                if (b == null) {
                    Thread.sleep(1);
                    continue;
                }
                int at = b.arrayOffset() + b.position();
                if (b.remaining() > 13 && b.array()[at + 11] == 'I') { // {"action":"I"
                    inserts++;
                }
            }
            st.close();
            if (inserts < n) {
                throw new IllegalStateException("raw stream read " + inserts + " of " + n + " inserts in 300 s");
            }
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        s.pg.execute("SELECT pg_drop_replication_slot('" + SLOT + "')");
        return seconds;
    }
}
