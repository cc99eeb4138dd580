package dev.aura.realtime.bench;

import dev.aura.realtime.common.wire.Subjects;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;
import io.nats.client.Connection;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The peer the CDC throughput is compared with (issue 18): Debezium's embedded engine with its
 * Postgres connector reading a backlog through {@code pgoutput}, publishing each change as its
 * JSON to NATS and flushing NATS at the end of each batch before marking it processed (the same
 * at-least-once point as the worker's). It runs in the benchmark JVM; it is never a product
 * dependency.
 *
 * <p>Use: {@link #prepare} before the backlog is written (slot and publication, so the backlog is
 * retained for it), then {@link #drain}, then {@link #drop}.
 */
final class DebeziumPeer {
    static final String VERSION = "3.6.1.Final";
    private static final String SLOT = "bench_dbz";
    private static final String PUBLICATION = "bench_dbz_pub";

    private final Stack s;
    private final Connection nats;

    DebeziumPeer(Stack s, Connection nats) {
        this.s = s;
        this.nats = nats;
    }

    void prepare(String table) {
        s.pg.execute(
                "CREATE PUBLICATION " + PUBLICATION + " FOR TABLE " + s.table(table),
                "SELECT pg_create_logical_replication_slot('" + SLOT + "', 'pgoutput')");
    }

    /** Drops the slot once the engine's walsender let go of it (it may linger a moment after close). */
    void drop() {
        String active =
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + SLOT + "' AND active_pid IS NOT NULL";
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (count(active) > 0 && System.nanoTime() < deadline) {
            Procs.sleep(100);
        }
        s.pg.execute("SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '" + SLOT
                + "' AND active_pid IS NOT NULL");
        while (count(active) > 0 && System.nanoTime() < deadline + 5_000_000_000L) {
            Procs.sleep(100);
        }
        s.pg.execute(
                "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'",
                "DROP PUBLICATION IF EXISTS " + PUBLICATION);
    }

    private long count(String sql) {
        try (java.sql.Connection c = s.pg.connect();
                java.sql.Statement st = c.createStatement();
                java.sql.ResultSet rs = st.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** The time from the connector task's start to the last change at the counter. */
    record Result(boolean complete, long received, double seconds) {}

    Result drain(String table, long n, ChangeCounter counter, long maxMs) throws Exception {
        counter.reset();
        String subject = Subjects.changes(s.projectId, table);
        long[] started = {0};
        Properties p = new Properties();
        p.setProperty("name", "bench-peer");
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        p.setProperty("offset.flush.interval.ms", "1000");
        p.setProperty("database.hostname", "127.0.0.1");
        p.setProperty("database.port", Integer.toString(s.pg.port()));
        p.setProperty("database.user", "postgres");
        p.setProperty("database.password", "unused");
        p.setProperty("database.dbname", "postgres");
        p.setProperty("topic.prefix", "bench");
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", SLOT);
        p.setProperty("publication.name", PUBLICATION);
        p.setProperty("publication.autocreate.mode", "disabled");
        p.setProperty("table.include.list", s.schema + "." + table);
        p.setProperty("snapshot.mode", "no_data");
        p.setProperty("converter.schemas.enable", "false");
        p.setProperty("key.converter.schemas.enable", "false");
        p.setProperty("value.converter.schemas.enable", "false");
        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
                .using(p)
                .using(new DebeziumEngine.ConnectorCallback() {
                    @Override
                    public void taskStarted() {
                        started[0] = System.nanoTime();
                    }
                })
                .notifying((records, committer) -> {
                    for (ChangeEvent<String, String> r : records) {
                        if (r.value() != null) {
                            nats.publish(subject, r.value().getBytes(StandardCharsets.UTF_8));
                        }
                        committer.markProcessed(r);
                    }
                    try {
                        nats.flush(Duration.ofSeconds(10));
                    } catch (Exception e) {
                        throw new IllegalStateException("NATS did not confirm a Debezium batch", e);
                    }
                    committer.markBatchFinished();
                })
                .build();
        ExecutorService executor = Executors.newSingleThreadExecutor();
        try {
            executor.execute(engine);
            boolean complete = counter.await(n, 60_000, maxMs);
            double seconds = (counter.lastNanos() - started[0]) / 1e9;
            return new Result(complete, counter.count(), seconds);
        } finally {
            engine.close();
            executor.shutdown();
            executor.awaitTermination(30, TimeUnit.SECONDS);
        }
    }
}
