package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.testkit.ControlApiClient;
import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RegistryEntries;
import dev.aura.realtime.testkit.ServiceEnv;
import dev.aura.realtime.testkit.ServiceHttp;
import dev.aura.realtime.testkit.ServiceProcess;
import dev.aura.realtime.testkit.TestTokens;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import io.nats.client.Nats;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The product on this machine for one benchmark run: a fresh Postgres (wal2json) and nats-server
 * from testkit, one project schema, and the cdc-worker / ws-front jars as processes that phases
 * start and stop. Service logs and JFR files go to {@code bench/target/bench-run/}.
 */
final class Stack implements AutoCloseable {
    static final String SECRET = "bench-secret-bench-secret-bench-secret-0001";
    /** The {@code Aura-Origin} of the worker this stack starts ({@link #startWorker}); counters count its events by it. */
    static final String WORKER_ORIGIN = "bench-cdc-worker";

    static final ObjectMapper JSON = new ObjectMapper();
    private static final java.util.regex.Pattern HTTP_LISTENING =
            java.util.regex.Pattern.compile("http api listening on port");

    final PostgresServer pg;
    final NatsServer nats;
    final Connection client;
    final TestTokens tokens = TestTokens.of(SECRET).ttl(Duration.ofHours(3));
    final String projectId = UUID.randomUUID().toString();
    final String schema = "project_" + projectId.replace('-', '_');
    final String slot = "aura_bench";
    final Path runDir;
    /** {@code --profile}: services record JFR ({@link #profiler}); otherwise no timed figure runs a profiler. */
    final boolean profile;

    private final java.util.concurrent.atomic.AtomicBoolean closed = new java.util.concurrent.atomic.AtomicBoolean();
    /** Postgres backends a figure stopped (SIGSTOP) and has not continued yet ({@link WalSenderPause}). */
    final java.util.Set<Long> stoppedBackends = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private ServiceProcess cdc;
    private ServiceHttp cdcHttp;
    private ServiceProcess front;
    private int wsPort;
    private final List<Replica> replicas = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** Registry entries we put, re-put like ws-front does: the bucket's max age (120 s) deletes them otherwise. */
    private final java.util.concurrent.ConcurrentHashMap<String, byte[]> entries =
            new java.util.concurrent.ConcurrentHashMap<>();

    private final java.util.concurrent.ScheduledExecutorService refresher =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r ->
                    Thread.ofPlatform().daemon().name("bench-registry-refresh").unstarted(r));

    /** A stack whose figures run without a profiler. */
    Stack(Path runDir) throws Exception {
        this(runDir, false);
    }

    Stack(Path runDir, boolean profile) throws Exception {
        this.runDir = runDir;
        this.profile = profile;
        Files.createDirectories(runDir);
        pg = PostgresServer.builder()
                .setting("max_wal_size", "8GB")
                .setting("checkpoint_timeout", "30min")
                .start();
        nats = NatsServer.start();
        client = Nats.connect(nats.options(NatsServer.User.TEST)
                .maxMessagesInOutgoingQueue(1_000_000)
                .build());
        refresher.scheduleWithFixedDelay(this::refreshEntries, 20, 20, java.util.concurrent.TimeUnit.SECONDS);
    }

    private void refreshEntries() {
        try {
            KeyValue kv = client.keyValue(SubscriptionEntry.BUCKET);
            for (var e : entries.entrySet()) {
                kv.put(e.getKey(), e.getValue());
            }
        } catch (Exception e) {
            System.err.println("registry refresh failed: " + e);
        }
    }

    // ---- cdc-worker ---------------------------------------------------------------------------

    /**
     * Starts the worker and waits until its HTTP port is bound. The machine is shared: another
     * process may take the free port before the worker binds it, so a bind failure is retried on
     * another port (at most three times).
     */
    ServiceProcess startWorker(Map<String, String> overrides, List<String> jvmArgs) {
        if (cdc != null) {
            throw new IllegalStateException("cdc-worker already running");
        }
        for (int attempt = 1; ; attempt++) {
            cdcHttp = new ServiceHttp(Ports.forService());
            Map<String, String> env = ServiceEnv.cdcWorker(pg, nats, SECRET, slot, cdcHttp.port());
            env.put("CDC_TABLE_REFRESH_MS", "500");
            env.put("INSTANCE_ID", WORKER_ORIGIN);
            env.putAll(overrides);
            ServiceProcess p = ServiceProcess.startJar("cdc-worker", cdcJar(), env, jvmArgs);
            try {
                p.waitForLog(HTTP_LISTENING, Duration.ofSeconds(60));
                cdc = p;
                return cdc;
            } catch (AssertionError e) {
                p.stop();
                if (attempt >= 3 || !p.logTail(40).contains("Address already in use")) {
                    throw e;
                }
            }
        }
    }

    void awaitWorkerActive() {
        cdcHttp.awaitHealth("\"cdc_active\":true", Duration.ofSeconds(90), cdc);
    }

    void stopWorker() {
        if (cdc != null) {
            cdc.stop();
            cdc = null;
        }
    }

    ServiceProcess worker() {
        return cdc;
    }

    /** Scrapes one counter of the worker's /metrics (sum over tags), 0 when absent. */
    double workerMetric(String name) {
        return cdcHttp.metric(name);
    }

    // ---- ws-front -----------------------------------------------------------------------------

    ServiceProcess startFront(Map<String, String> overrides, List<String> jvmArgs) {
        if (front != null) {
            throw new IllegalStateException("ws-front already running");
        }
        Replica r = launchFront("ws-front", overrides, jvmArgs);
        wsPort = r.port();
        front = r.process();
        return front;
    }

    /** A ws-front replica of its own (figures with two replicas); the caller stops or kills it. */
    record Replica(ServiceProcess process, int port) {}

    /** Starts one more ws-front beside (or instead of) the main one, named {@code name} in the logs. */
    Replica startReplica(String name, Map<String, String> overrides, List<String> jvmArgs) {
        Replica r = launchFront(name, overrides, jvmArgs);
        replicas.add(r);
        return r;
    }

    private Replica launchFront(String name, Map<String, String> overrides, List<String> jvmArgs) {
        for (int attempt = 1; ; attempt++) {
            int port = Ports.forService();
            Map<String, String> env = ServiceEnv.wsFront(nats, SECRET, port);
            env.putAll(overrides);
            ServiceProcess p = ServiceProcess.startJar(name, Jars.wsFront(), env, jvmArgs);
            try {
                new ServiceHttp(port).awaitHealth("\"status\":\"ok\"", Duration.ofSeconds(60), p);
                return new Replica(p, port);
            } catch (AssertionError e) {
                p.stop();
                if (attempt >= 3 || !p.logTail(40).contains("Address already in use")) {
                    throw e;
                }
            }
        }
    }

    /**
     * The project's row of {@code aura_platform.project_limits}: a figure raises the limits it
     * would otherwise measure (the free tier's 200 users and 100 joins/s). A ws-front asks for the
     * row on a project's first connection and caches it, so call this before starting replicas.
     */
    void projectLimits(int maxConcurrentUsers, int maxJoinsPerSecond) {
        pg.execute("INSERT INTO aura_platform.project_limits(project_id, max_concurrent_users, max_joins_per_second)"
                + " VALUES ('" + projectId + "', " + maxConcurrentUsers + ", " + maxJoinsPerSecond + ")"
                + " ON CONFLICT (project_id) DO UPDATE SET max_concurrent_users = EXCLUDED.max_concurrent_users,"
                + " max_joins_per_second = EXCLUDED.max_joins_per_second, updated_at = now()");
    }

    void stopFront() {
        if (front != null) {
            front.stop();
            front = null;
        }
    }

    /** Scrapes one meter of ws-front's /metrics (sum over tags), 0 when absent. */
    double frontMetric(String name) {
        return new ServiceHttp(wsPort).metric(name);
    }

    URI wsUri(String vsn) {
        return wsUri(wsPort, vsn);
    }

    URI wsUri(int port, String vsn) {
        return URI.create(
                "ws://127.0.0.1:" + port + "/realtime/v1/websocket?apikey=" + tokens.anon(projectId) + "&vsn=" + vsn);
    }

    /** The main ws-front's WebSocket URI with another project's anon key. */
    URI wsUriOf(String project, String vsn) {
        return URI.create(
                "ws://127.0.0.1:" + wsPort + "/realtime/v1/websocket?apikey=" + tokens.anon(project) + "&vsn=" + vsn);
    }

    String realtimeJsUrl() {
        return "ws://127.0.0.1:" + wsPort + "/realtime/v1";
    }

    // ---- project and tables -------------------------------------------------------------------

    /**
     * The cdc-worker jar: {@code AURA_BENCH_CDC_JAR} when set (an older build, to measure before
     * and after a change in one run, scripts/bench-identity.sh), else this build's.
     */
    static Path cdcJar() {
        String other = System.getenv("AURA_BENCH_CDC_JAR");
        return other == null || other.isBlank() ? Jars.cdcWorker() : Path.of(other);
    }

    /** Needs the worker's bootstrap (aura_platform, roles): call after {@link #awaitWorkerActive}. */
    void createProject() {
        createProject(projectId);
    }

    /** Registers project {@code id} (this stack's, or another one a figure needs); @return its schema */
    String createProject(String id) {
        String schema = "project_" + id.replace('-', '_');
        pg.execute(
                "CREATE SCHEMA IF NOT EXISTS " + schema,
                // what a build before issue 22 needs; a newer worker revokes it when it provisions
                // the project (it grants USAGE to the project's own roles instead)
                "GRANT USAGE ON SCHEMA " + schema + " TO aura_anon, aura_authenticated",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + id + "', '" + schema
                        + "') ON CONFLICT DO NOTHING");
        return schema;
    }

    String table(String name) {
        return schema + "." + name;
    }

    /** Enables realtime on a table through the control API, as a project admin would. */
    void enable(String table) {
        new ControlApiClient(cdcHttp.port()).enable(projectId, table, tokens.serviceRole(projectId));
    }

    /**
     * Puts a registry entry as ws-front would for a client bound to {@code table} (all events);
     * {@code sub} becomes the {@code sub} claim when not null. Returns the sub id.
     */
    String subscribe(String table, String role, String sub) throws Exception {
        ObjectNode claims = RegistryEntries.claims(role, projectId);
        if (sub != null) {
            claims.put("sub", sub).put("aud", "authenticated");
        }
        SubscriptionEntry entry = RegistryEntries.binding(projectId, table, claims, "bench");
        entries.put(entry.key(), RegistryEntries.put(client, entry));
        return entry.subId();
    }

    /** Keeps a registry entry that was put already alive (re-put with the others). */
    void keep(String key, byte[] json) {
        entries.put(key, json);
    }

    /** Stops re-putting a registry entry (the caller deletes it). */
    void forget(String key) {
        entries.remove(key);
    }

    // ---- plumbing -----------------------------------------------------------------------------

    /**
     * The JVM options that record {@code file} when this run profiles ({@code --profile}), else none:
     * timed figures run without a profiler (issue 25), a profiled run is a separate run.
     */
    List<String> profiler(Path file) {
        return profile ? jfr(file) : List.of();
    }

    /** JVM options recording a JFR profile to {@code file}; figures use {@link #profiler}. */
    static List<String> jfr(Path file) {
        List<String> args = new ArrayList<>();
        args.add("-XX:StartFlightRecording=filename=" + file + ",settings=profile,dumponexit=true");
        return args;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        // a Postgres backend left stopped would never see the server's shutdown (figure 1 pauses walsenders)
        for (long pid : stoppedBackends) {
            Procs.run(List.of("kill", "-CONT", Long.toString(pid)));
        }
        refresher.shutdownNow();
        replicas.forEach(r -> r.process().stop());
        stopFront();
        stopWorker();
        try {
            client.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        nats.close();
        pg.close();
    }
}
