package dev.aura.realtime.e2e;

import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.testkit.ControlApiClient;
import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.ServiceEnv;
import dev.aura.realtime.testkit.ServiceHttp;
import dev.aura.realtime.testkit.ServiceProcess;
import dev.aura.realtime.testkit.TestTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.awaitility.Awaitility;

/**
 * The product as users run it: the cdc-worker and ws-front jars as separate processes on a test
 * Postgres and nats-server, plus one project with its own schema.
 */
public final class E2eStack implements AutoCloseable {
    public static final String SECRET = "e2e-secret-e2e-secret-e2e-secret-0042";
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    public final PostgresServer pg;
    public final NatsServer nats;
    public final TestTokens tokens = TestTokens.of(SECRET);
    public final String projectId;
    public final String schema;
    public final String slot;
    public final int cdcPort = Ports.forService();
    private final List<ServiceProcess> fronts = new ArrayList<>();
    private final List<Integer> frontPorts = new ArrayList<>();
    private final Map<Integer, ServiceHttp> http = new ConcurrentHashMap<>();
    private final ControlApiClient control = new ControlApiClient(cdcPort);
    private ServiceProcess cdc;

    public E2eStack(PostgresServer pg, NatsServer nats) {
        this(
                pg,
                nats,
                UUID.randomUUID().toString(),
                "aura_e2e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10));
    }

    /**
     * A stack adopting an existing project and slot name, e.g. of a cluster loaded from a fixture
     * (the provisioned tenant login is named after the slot); starts nothing, registers nothing.
     */
    public E2eStack(PostgresServer pg, NatsServer nats, String projectId, String slot) {
        this.pg = pg;
        this.nats = nats;
        this.projectId = projectId;
        this.schema = schemaOf(projectId);
        this.slot = slot;
    }

    /** The project's realtime schema, quoted for SQL ({@code "<schema>_realtime"}). */
    public String realtimeSchema() {
        return "\"" + schema.replace("\"", "") + "_realtime\"";
    }

    /**
     * Waits until the cdc-worker has provisioned the project's realtime schema at the current
     * layout ({@link RealtimeSchemas#VERSION}: binary payloads, {@code expires_at}, ...).
     */
    public void awaitRealtimeSchema(Duration timeout) {
        Awaitility.await()
                .alias("realtime schema of " + projectId + " at layout " + RealtimeSchemas.VERSION)
                .atMost(timeout)
                .until(() -> pg.queryOne("SELECT count(*) FROM aura_platform.projects WHERE project_id = '" + projectId
                                + "' AND realtime_schema_version >= " + RealtimeSchemas.VERSION)
                        .equals("1"));
    }

    /** A cdc-worker, {@code wsFronts} ws-front replicas (default settings) and the project, on {@code pg} and {@code nats}. */
    public static E2eStack start(PostgresServer pg, NatsServer nats, int wsFronts) {
        return start(pg, nats, wsFronts, Map.of());
    }

    /** As {@link #start(PostgresServer, NatsServer, int)}, the cdc-worker with {@code cdcOverrides}. */
    public static E2eStack start(PostgresServer pg, NatsServer nats, int wsFronts, Map<String, String> cdcOverrides) {
        E2eStack s = new E2eStack(pg, nats);
        try {
            s.startCdcWorker(cdcOverrides, List.of());
            for (int i = 0; i < wsFronts; i++) {
                s.startWsFront(Map.of());
            }
            s.createProject();
            return s;
        } catch (RuntimeException | Error e) {
            // a half-started stack must not outlive the test: a leaked worker on the shared
            // nats-server answers other tests' join checks and publishes into their subjects
            s.close();
            throw e;
        }
    }

    /** {@link #start} on the JVM-wide Postgres and nats-server. */
    public static E2eStack startDefault(int wsFronts) {
        return start(PostgresServer.shared(), NatsServer.shared(), wsFronts);
    }

    /** The environment of this stack's cdc-worker (a new mutable map, see {@link ServiceEnv#cdcWorker}). */
    public Map<String, String> cdcEnv() {
        return ServiceEnv.cdcWorker(pg, nats, SECRET, slot, cdcPort);
    }

    /** Starts the cdc-worker jar with {@link #cdcEnv()} plus {@code overrides} and waits until it is active. */
    public ServiceProcess startCdcWorker(Map<String, String> overrides, List<String> jvmArgs) {
        Map<String, String> env = cdcEnv();
        env.putAll(overrides);
        cdc = ServiceProcess.startJar("cdc-worker", Jars.cdcWorker(), env, jvmArgs);
        http(cdcPort).awaitHealth("\"cdc_active\":true", START_TIMEOUT, cdc);
        return cdc;
    }

    /** The cdc-worker's control API as a project admin calls it. */
    public ControlApiClient control() {
        return control;
    }

    public ServiceProcess cdcWorker() {
        return cdc;
    }

    /** Starts a ws-front replica on a free port and waits for its {@code /health}; returns its index. */
    public int startWsFront(Map<String, String> overrides) {
        return startWsFront(overrides, List.of());
    }

    /** {@link #startWsFront(Map)} with JVM options (e.g. {@code -Xmx768m}, the chart's heap). */
    public int startWsFront(Map<String, String> overrides, List<String> jvmArgs) {
        int port = Ports.forService();
        Map<String, String> env = ServiceEnv.wsFront(nats, SECRET, port);
        env.putAll(overrides);
        ServiceProcess front = ServiceProcess.startJar("ws-front-" + fronts.size(), Jars.wsFront(), env, jvmArgs);
        fronts.add(front);
        frontPorts.add(port);
        http(port).awaitHealth("\"status\":\"ok\"", START_TIMEOUT, front);
        return fronts.size() - 1;
    }

    /**
     * Starts replica {@code i} again on its port (after a {@code kill -9} or stop), so clients
     * reconnecting to the same URL reach it; waits for its {@code /health}.
     */
    public void restartWsFront(int i, Map<String, String> overrides) {
        int port = frontPorts.get(i);
        Map<String, String> env = ServiceEnv.wsFront(nats, SECRET, port);
        env.putAll(overrides);
        fronts.get(i).close();
        ServiceProcess front = ServiceProcess.startJar("ws-front-" + i, Jars.wsFront(), env, List.of());
        fronts.set(i, front);
        http(port).awaitHealth("\"status\":\"ok\"", START_TIMEOUT, front);
    }

    public ServiceProcess wsFront(int i) {
        return fronts.get(i);
    }

    /** The realtime-js endpoint of replica {@code i}: {@code ws://127.0.0.1:port/realtime/v1}. */
    public String wsUrl(int i) {
        return "ws://127.0.0.1:" + frontPorts.get(i) + "/realtime/v1";
    }

    public int wsPort(int i) {
        return frontPorts.get(i);
    }

    /** {@code /health} and {@code /metrics} of the service listening on {@code port}. */
    public ServiceHttp http(int port) {
        return http.computeIfAbsent(port, ServiceHttp::new);
    }

    /** {@code /health} and {@code /metrics} of this stack's cdc-worker. */
    public ServiceHttp cdcHttp() {
        return http(cdcPort);
    }

    /** The {@code /health} body of the service on {@code port}, or {@code unreachable: ...}. */
    public String health(int port) {
        return http(port).health();
    }

    public void createProject() {
        createProject(projectId);
    }

    /** Registers another project (schema {@code project_<id>}) on the same stack. */
    public void createProject(String id) {
        String schemaName = schemaOf(id);
        pg.execute(
                "CREATE SCHEMA IF NOT EXISTS \"" + schemaName + "\"",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + id + "', '" + schemaName
                        + "') ON CONFLICT DO NOTHING");
    }

    public static String schemaOf(String projectId) {
        return "project_" + projectId.replace('-', '_');
    }

    /** Enables realtime on a table through the control API, as a project admin would. */
    public void enable(String table) {
        enable(projectId, table);
    }

    /** Enables realtime on a table of another project registered with {@link #createProject(String)}. */
    public void enable(String projectId, String table) {
        control.enable(projectId, table, tokens.serviceRole(projectId));
    }

    /**
     * Creates {@code name} in the project's schema with {@code columns} (e.g.
     * {@code "(id int PRIMARY KEY)"}), lets the client roles select from it, and enables realtime
     * on it.
     */
    public void createEnabledTable(String name, String columns) {
        createEnabledTable(projectId, name, columns);
    }

    /** {@link #createEnabledTable(String, String)} in another project's schema. */
    public void createEnabledTable(String projectId, String name, String columns) {
        String table = qualified(schemaOf(projectId), name);
        pg.execute("CREATE TABLE " + table + columns, "GRANT SELECT ON " + table + " TO aura_anon, aura_authenticated");
        enable(projectId, name);
    }

    /** The quoted name of {@code name} in this project's schema. */
    public String table(String name) {
        return qualified(schema, name);
    }

    /** The quoted name of {@code name} in the schema of another project of this stack. */
    public String table(String projectId, String name) {
        return qualified(schemaOf(projectId), name);
    }

    private static String qualified(String schemaName, String name) {
        return "\"" + schemaName + "\".\"" + name.replace("\"", "\"\"") + "\"";
    }

    public void sql(String... statements) {
        pg.execute(statements);
    }

    @Override
    public void close() {
        for (ServiceProcess f : fronts) {
            f.close();
        }
        if (cdc != null) {
            cdc.close();
        }
        try {
            pg.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot
                    + "' AND NOT active");
        } catch (RuntimeException ignored) {
            // the slot may still be held for a moment by the dying worker; it is per-test and harmless
        }
    }
}
