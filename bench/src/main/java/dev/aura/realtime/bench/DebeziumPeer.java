package dev.aura.realtime.bench;

import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.ServiceProcess;
import io.debezium.engine.ChangeEvent;
import io.debezium.engine.DebeziumEngine;
import io.debezium.engine.format.Json;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import io.nats.client.impl.Headers;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The peer the CDC throughput is compared with (issue 18): Debezium's embedded engine with its
 * Postgres connector reading a backlog through {@code pgoutput}, publishing each change as its
 * JSON to NATS (with {@code Aura-Origin} and {@code Aura-Event-Id} headers, as the worker's events
 * carry, so the counter counts its events only: issue 39) and flushing NATS at the end of each
 * batch before marking it processed (the same at-least-once point as the worker's). It runs in a JVM of its own started with the worker's JVM
 * flags and publishes on a NATS connection of its own (issue 25: it used to share the benchmark
 * JVM and the counter's connection); it is never a product dependency.
 *
 * <p>Use: {@link #prepare} (slot and publication, so every later backlog is retained for it), then
 * {@link #start}, which returns a {@link WarmProcess} paused and resumed like the worker; after
 * closing it, {@link #drop}.
 */
final class DebeziumPeer {
    static final String VERSION = "3.6.1.Final";
    /** The peer's {@code Aura-Origin}: {@link ChangeCounter} counts its events by it. */
    static final String ORIGIN = "bench-debezium-peer";

    static final String SLOT = "bench_dbz";
    private static final String PUBLICATION = "bench_dbz_pub";

    private final Stack s;

    DebeziumPeer(Stack s) {
        this.s = s;
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

    /**
     * Starts the peer in a JVM of its own with {@code jvmArgs} (the worker's flags), publishing on
     * its own NATS connection, as the cdc-worker does; call {@link #prepare} first. Returns once the
     * connector task started. The process runs this jar's {@link BenchMain} with
     * {@code AURA_BENCH_PEER} set, which calls {@link #serve}.
     */
    WarmProcess start(String table, List<String> jvmArgs) throws Exception {
        Map<String, String> env = new LinkedHashMap<>(s.nats.env(NatsServer.User.TEST));
        env.put("AURA_BENCH_PEER", "1");
        env.put("PEER_PG_PORT", Integer.toString(s.pg.port()));
        env.put("PEER_TABLE", s.schema + "." + table);
        env.put("PEER_SUBJECT", Subjects.changes(s.projectId, table));
        Path jar = Path.of(BenchMain.class
                .getProtectionDomain()
                .getCodeSource()
                .getLocation()
                .toURI());
        ServiceProcess p = ServiceProcess.startJar("debezium-peer", jar, env, jvmArgs);
        try {
            p.waitForLog(TASK_STARTED, Duration.ofSeconds(120));
        } catch (AssertionError e) {
            p.stop();
            throw e;
        }
        return new WarmProcess("Debezium " + VERSION, ORIGIN, p, null);
    }

    /**
     * The change's id in the worker's form, {@code <LSN X/Y>:<primary key>}: the LSN of the change
     * (Debezium's {@code source.lsn}) and the row's key, so a re-delivered change has the same id.
     */
    static String eventId(String value, String key) {
        int at = value.indexOf("\"lsn\":");
        long lsn = 0;
        if (at >= 0) {
            for (int i = at + 6; i < value.length() && Character.isDigit(value.charAt(i)); i++) {
                lsn = lsn * 10 + (value.charAt(i) - '0');
            }
        }
        StringBuilder id = new StringBuilder(new Lsn(lsn).toString()).append(':');
        for (int i = 0; key != null && i < key.length(); i++) {
            if (Character.isDigit(key.charAt(i))) {
                id.append(key.charAt(i));
            }
        }
        return id.toString();
    }

    private static final Pattern TASK_STARTED = Pattern.compile("bench peer: connector task started");

    /**
     * The peer process's main: the embedded engine reading the slot and publishing each change's JSON
     * on its own NATS connection, flushing NATS before marking each batch processed. Runs until killed.
     */
    static void serve(Map<String, String> env) throws Exception {
        Connection nats = Nats.connect(new Options.Builder()
                .server(env.get("NATS_URL"))
                .userInfo(env.get("NATS_USER"), env.get("NATS_PASSWORD"))
                .maxMessagesInOutgoingQueue(1_000_000)
                .build());
        String subject = env.get("PEER_SUBJECT");
        Properties p = new Properties();
        p.setProperty("name", "bench-peer");
        p.setProperty("connector.class", "io.debezium.connector.postgresql.PostgresConnector");
        p.setProperty("offset.storage", "org.apache.kafka.connect.storage.MemoryOffsetBackingStore");
        p.setProperty("offset.flush.interval.ms", "1000");
        p.setProperty("database.hostname", "127.0.0.1");
        p.setProperty("database.port", env.get("PEER_PG_PORT"));
        p.setProperty("database.user", "postgres");
        p.setProperty("database.password", "unused");
        p.setProperty("database.dbname", "postgres");
        p.setProperty("topic.prefix", "bench");
        p.setProperty("plugin.name", "pgoutput");
        p.setProperty("slot.name", SLOT);
        p.setProperty("publication.name", PUBLICATION);
        p.setProperty("publication.autocreate.mode", "disabled");
        p.setProperty("table.include.list", env.get("PEER_TABLE"));
        p.setProperty("snapshot.mode", "no_data");
        // the worker waits 20 ms on an idle slot in the benchmark (testkit CDC_IDLE_BACKOFF_MS); Debezium's
        // default 500 ms wait for an empty queue would add up to half a second to a resumed turn
        p.setProperty("poll.interval.ms", "20");
        // the peer is SIGSTOPped between its turns, its walsender too (issue 39): an LSN flush in flight when
        // it was paused is older than lsn.flush.timeout.ms when it resumes, which would stop the connector
        p.setProperty("lsn.flush.timeout.action", "warn");
        p.setProperty("converter.schemas.enable", "false");
        p.setProperty("key.converter.schemas.enable", "false");
        p.setProperty("value.converter.schemas.enable", "false");
        DebeziumEngine<ChangeEvent<String, String>> engine = DebeziumEngine.create(Json.class)
                .using(p)
                .using(new DebeziumEngine.ConnectorCallback() {
                    @Override
                    public void taskStarted() {
                        System.out.println("bench peer: connector task started");
                        System.out.flush();
                    }
                })
                .notifying((records, committer) -> {
                    for (ChangeEvent<String, String> r : records) {
                        if (r.value() != null) {
                            // what the counter needs to attribute it (the worker sends the same two and one more)
                            Headers h = new Headers()
                                    .add(AuraHeaders.ORIGIN, ORIGIN)
                                    .add(AuraHeaders.EVENT_ID, eventId(r.value(), r.key()));
                            nats.publish(subject, h, r.value().getBytes(StandardCharsets.UTF_8));
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
        executor.execute(engine);
        executor.shutdown();
        executor.awaitTermination(365, TimeUnit.DAYS);
    }
}
