package dev.aura.realtime.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.ServiceEnv;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Nats;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;
import org.awaitility.Awaitility;

/**
 * A project with its own schema on the shared test Postgres, an in-process cdc-worker on its own
 * slot, and a NATS subscriber recording every change event with its headers.
 */
public final class CdcFixture implements AutoCloseable {
    public static final String SECRET = "test-secret-test-secret-test-secret-42";
    public final PostgresServer pg;
    public final NatsServer natsServer;
    public final String projectId = UUID.randomUUID().toString();
    public final String schema = "project_" + projectId.replace('-', '_');
    public final String slot =
            "aura_t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    public final List<Received> received = new CopyOnWriteArrayList<>();
    /** Every {@code CdcStatus} published on {@link Subjects#CDC_STATUS} (by any worker on this NATS). */
    public final List<JsonNode> statuses = new CopyOnWriteArrayList<>();

    public final Connection nats;
    private final ObjectMapper mapper = WireJson.mapper();
    private final Dispatcher dispatcher;
    private final Dispatcher statusDispatcher;
    private final java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    private CdcWorker worker;
    /** A subject of this project's change subjects that only {@link #awaitSettled} publishes to. */
    private final String settledSubject = Subjects.CHANGES + "." + Subjects.encodeToken(projectId) + ".~settled";

    private final java.util.concurrent.atomic.AtomicInteger settledMarks =
            new java.util.concurrent.atomic.AtomicInteger();

    /** One received NATS message: subject, headers and the parsed ChangeEvent JSON. */
    public record Received(String subject, String eventId, String origin, String epoch, JsonNode body, String raw) {
        public JsonNode data() {
            return body.get("data");
        }
    }

    public CdcFixture(PostgresServer pg, NatsServer natsServer) throws Exception {
        this.pg = pg;
        this.natsServer = natsServer;
        this.nats = Nats.connect(natsServer
                .options(NatsServer.User.TEST)
                .maxReconnects(-1)
                .reconnectWait(Duration.ofMillis(50))
                .build());
        this.dispatcher = nats.createDispatcher(msg -> {
            if (msg.getSubject().equals(settledSubject)) {
                settledMarks.incrementAndGet();
                return;
            }
            try {
                received.add(new Received(
                        msg.getSubject(),
                        header(msg, AuraHeaders.EVENT_ID),
                        header(msg, AuraHeaders.ORIGIN),
                        header(msg, AuraHeaders.LEASE_EPOCH),
                        mapper.readTree(msg.getData()),
                        new String(msg.getData(), java.nio.charset.StandardCharsets.UTF_8)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        dispatcher.subscribe(Subjects.CHANGES + "." + Subjects.encodeToken(projectId) + ".>");
        statusDispatcher = nats.createDispatcher(msg -> {
            try {
                statuses.add(mapper.readTree(msg.getData()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        statusDispatcher.subscribe(Subjects.CDC_STATUS);
        nats.flush(Duration.ofSeconds(5));
    }

    private static String header(io.nats.client.Message msg, String name) {
        return msg.getHeaders() == null ? null : msg.getHeaders().getFirst(name);
    }

    /**
     * The environment of this fixture's in-process worker (a new mutable map): the testkit's test
     * worker on this fixture's slot, with an HTTP port picked by the worker.
     */
    public Map<String, String> env() {
        return ServiceEnv.cdcWorker(pg, natsServer, SECRET, slot, 0);
    }

    /** Starts a worker with {@link #env} plus {@code overrides} and waits until it is {@code cdc_active}. */
    public CdcWorker startWorker(Map<String, String> overrides) throws Exception {
        startWorkerInactive(overrides);
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .until(() -> worker.state().snapshot().active());
        return worker;
    }

    /** Starts a worker without waiting for {@code cdc_active} (for tests of failure states). */
    public CdcWorker startWorkerInactive(Map<String, String> overrides) throws Exception {
        Map<String, String> env = env();
        env.putAll(overrides);
        worker = new CdcWorker(CdcConfig.fromEnv(new Env(env)), Clock.systemUTC());
        worker.start();
        return worker;
    }

    /** Closes the running worker (as a shutdown would); the slot stays. */
    public void stopWorker() {
        if (worker != null) {
            worker.close();
            worker = null;
        }
    }

    public CdcWorker worker() {
        return worker;
    }

    /** {@code GET /health} of the running worker. */
    public JsonNode health() throws Exception {
        return mapper.readTree(get("/health"));
    }

    /** {@code GET /metrics} of the running worker (Prometheus text). */
    public String metrics() throws Exception {
        return get("/metrics");
    }

    /** The value of a Prometheus sample line starting with {@code name} (first match), or NaN. */
    public double metric(String name) throws Exception {
        for (String line : metrics().split("\n")) {
            if (line.startsWith(name + " ") || line.startsWith(name + "{")) {
                return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
            }
        }
        return Double.NaN;
    }

    private String get(String path) throws Exception {
        var request = java.net.http.HttpRequest.newBuilder(
                        java.net.URI.create("http://127.0.0.1:" + worker.httpPort() + path))
                .build();
        return http.send(request, java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
    }

    /** Waits until {@code /health} shows the given {@code reason_code}; returns that health document. */
    public JsonNode awaitReason(String code, Duration timeout) {
        JsonNode[] last = new JsonNode[1];
        Awaitility.await().atMost(timeout).pollInterval(Duration.ofMillis(50)).until(() -> {
            last[0] = health();
            return code.equals(last[0].path("reason_code").asText(null));
        });
        return last[0];
    }

    /** One column of this fixture's slot in {@code pg_replication_slots} (as text), or null. */
    public String slotColumn(String column) {
        try (var c = pg.connect();
                var s = c.createStatement();
                var rs = s.executeQuery(
                        "SELECT " + column + "::text FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
            return rs.next() ? rs.getString(1) : null;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The first column of the first row of a query, as text. */
    public String queryOne(String sql) {
        try (var c = pg.connect();
                var s = c.createStatement();
                var rs = s.executeQuery(sql)) {
            return rs.next() ? rs.getString(1) : null;
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(sql, e);
        }
    }

    /** {@code "schema".name} quoted for SQL. */
    public String table(String name) {
        return "\"" + schema + "\".\"" + name.replace("\"", "\"\"") + "\"";
    }

    /** Registers the project and creates its schema (the platform tables exist once a worker started). */
    public void createProject() {
        pg.execute(
                "CREATE SCHEMA IF NOT EXISTS \"" + schema + "\"",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + projectId + "', '" + schema
                        + "') ON CONFLICT DO NOTHING");
    }

    public void enable(String table) {
        pg.execute("INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + projectId + "', '"
                + table.replace("'", "''") + "') ON CONFLICT (project_id, table_name) DO UPDATE SET enabled = true");
    }

    public void disable(String table) {
        pg.execute("UPDATE aura_platform.realtime_tables SET enabled = false WHERE project_id = '" + projectId
                + "' AND table_name = '" + table.replace("'", "''") + "'");
    }

    /** Puts a service_role registry entry as ws-front would and waits until the worker's index has it. */
    public String subscribe(String table, String event, String filter) throws Exception {
        return subscribeAs(projectId, table, event, filter, "service_role", null);
    }

    /**
     * Puts a registry entry for {@code role} (claims {@code role}, {@code ref}, and {@code sub} when
     * not null) and waits until the worker's index has it.
     */
    public String subscribeAs(String project, String table, String event, String filter, String role, String sub)
            throws Exception {
        String subId = UUID.randomUUID().toString();
        KvBuckets.ensure(nats, KvBuckets.registry(64L * 1024 * 1024));
        var claims = mapper.createObjectNode().put("role", role).put("ref", project);
        if (sub != null) {
            claims.put("sub", sub);
        }
        SubscriptionEntry entry = new SubscriptionEntry(
                subId, project, table, event, filter, role, claims, System.currentTimeMillis() + 3_600_000, "test");
        int before = worker.registrySize();
        nats.keyValue(SubscriptionEntry.BUCKET).put(entry.key(), mapper.writeValueAsBytes(entry));
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> worker.registrySize() > before);
        return subId;
    }

    /**
     * Waits until the poll loop decodes {@code tables} of this project: the worker's enabled-table
     * list has them and two polls started since (a poll already running may have read the list
     * before and would skip a change committed now).
     */
    public void awaitCaptured(String... tables) {
        Awaitility.await().atMost(Duration.ofSeconds(15)).until(() -> {
            var enabled = worker.enabledTables();
            return java.util.Arrays.stream(tables).allMatch(t -> enabled.contains(schema, t));
        });
        awaitPolls(2);
    }

    /** Waits until the poll loop no longer decodes {@code table}, as {@link #awaitCaptured} does. */
    public void awaitNotCaptured(String table) {
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(() -> !worker.enabledTables().contains(schema, table));
        awaitPolls(2);
    }

    private void awaitPolls(int polls) {
        long from = worker.state().snapshot().polls();
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(() -> worker.state().snapshot().polls() >= from + polls);
    }

    /**
     * Waits until the worker has processed everything committed so far (the slot's confirmed
     * position passed the current WAL flush position, which it does only after NATS confirmed the
     * batch) and everything it published reached this fixture's subscriber: after it, {@link #received}
     * is complete, so a test can assert that something did <em>not</em> arrive.
     */
    public void awaitSettled() throws Exception {
        String flushed = queryOne("SELECT pg_current_wal_flush_lsn()::text");
        Awaitility.await()
                .atMost(Duration.ofSeconds(15))
                .until(() -> "true"
                        .equals(queryOne("SELECT (confirmed_flush_lsn >= '" + flushed
                                + "')::text FROM pg_replication_slots WHERE slot_name = '" + slot + "'")));
        // The worker's events were routed to us before the slot advanced; a mark published now
        // comes after them, and the dispatcher handles messages in order.
        int marks = settledMarks.get();
        nats.publish(settledSubject, "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
        Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> settledMarks.get() > marks);
    }

    public List<Received> await(Predicate<List<Received>> condition, Duration timeout) {
        Awaitility.await()
                .atMost(timeout)
                .pollInterval(Duration.ofMillis(20))
                .until(() -> condition.test(new ArrayList<>(received)));
        return new ArrayList<>(received);
    }

    public List<Received> ofType(String type) {
        return received.stream()
                .filter(r -> type.equals(r.body().path("type").asText()))
                .toList();
    }

    public void sql(String... statements) {
        pg.execute(statements);
    }

    @Override
    public void close() throws Exception {
        if (worker != null) {
            worker.close();
        }
        nats.closeDispatcher(dispatcher);
        nats.closeDispatcher(statusDispatcher);
        nats.close();
        try {
            // Later tests on the shared server should not decode this project's tables any more.
            pg.execute(
                    "UPDATE aura_platform.realtime_tables SET enabled = false WHERE project_id = '" + projectId + "'");
        } catch (RuntimeException platformTablesNotCreated) {
            // the worker never bootstrapped (e.g. a failure test): nothing to disable
        }
        // The worker's walsender may hold the slot for a moment after close() ("is active for
        // PID"): drop it until it is gone, so later tests on the shared server never see it.
        Awaitility.await("test slot " + slot + " dropped")
                .atMost(Duration.ofSeconds(30))
                .ignoreExceptions()
                .until(() -> {
                    pg.execute("SELECT pg_drop_replication_slot('" + slot
                            + "') FROM pg_replication_slots WHERE slot_name = '" + slot + "'");
                    return slotColumn("slot_name") == null;
                });
    }
}
