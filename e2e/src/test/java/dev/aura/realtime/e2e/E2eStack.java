package dev.aura.realtime.e2e;

import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.ServiceProcess;
import dev.aura.realtime.testkit.TestTokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The product as users run it: the cdc-worker and ws-front jars as separate processes on the
 * shared test Postgres and nats-server, plus one project with its own schema.
 */
public final class E2eStack implements AutoCloseable {
    public static final String SECRET = "e2e-secret-e2e-secret-e2e-secret-0042";
    public final PostgresServer pg;
    public final NatsServer nats;
    public final TestTokens tokens = TestTokens.of(SECRET);
    public final String projectId = UUID.randomUUID().toString();
    public final String schema = "project_" + projectId.replace('-', '_');
    public final String slot =
            "aura_e2e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    public final int cdcPort = Ports.free();
    private final List<ServiceProcess> fronts = new ArrayList<>();
    private final List<Integer> frontPorts = new ArrayList<>();
    private ServiceProcess cdc;
    private final HttpClient http = HttpClient.newHttpClient();

    public E2eStack(PostgresServer pg, NatsServer nats) {
        this.pg = pg;
        this.nats = nats;
    }

    public static E2eStack startDefault(int wsFronts) {
        E2eStack s = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        s.startCdcWorker(Map.of(), List.of());
        for (int i = 0; i < wsFronts; i++) {
            s.startWsFront(Map.of());
        }
        s.createProject();
        return s;
    }

    public Map<String, String> cdcEnv() {
        Map<String, String> env = new HashMap<>();
        env.put("POSTGRES_REPLICATION_URL", pg.jdbcUrl());
        env.put("NATS_URL", nats.url());
        env.put("AURA_JWT_SECRET", SECRET);
        env.put("CDC_HTTP_PORT", Integer.toString(cdcPort));
        env.put("CDC_SLOT_NAME", slot);
        env.put("CDC_TABLE_REFRESH_MS", "300");
        env.put("CDC_IDLE_BACKOFF_MS", "20");
        env.put("LEADER_ELECTION", "disabled");
        return env;
    }

    public ServiceProcess startCdcWorker(Map<String, String> overrides, List<String> jvmArgs) {
        Map<String, String> env = cdcEnv();
        env.putAll(overrides);
        cdc = ServiceProcess.startJar("cdc-worker", Jars.cdcWorker(), env, jvmArgs);
        awaitHealth(cdcPort, "\"cdc_active\":true", Duration.ofSeconds(60));
        return cdc;
    }

    public ServiceProcess cdcWorker() {
        return cdc;
    }

    /** Starts a ws-front replica on a free port; returns its index. */
    public int startWsFront(Map<String, String> overrides) {
        int port = Ports.free();
        Map<String, String> env = new HashMap<>();
        env.put("NATS_URL", nats.url());
        env.put("AURA_JWT_SECRET", SECRET);
        env.put("WS_PORT", Integer.toString(port));
        env.putAll(overrides);
        fronts.add(ServiceProcess.startJar("ws-front-" + fronts.size(), Jars.wsFront(), env, List.of()));
        frontPorts.add(port);
        awaitHealth(port, "\"status\":\"ok\"", Duration.ofSeconds(60));
        return fronts.size() - 1;
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

    public void createProject() {
        createProject(projectId);
    }

    /** Registers another project (schema {@code project_<id>}) on the same stack. */
    public void createProject(String id) {
        String schemaName = schemaOf(id);
        pg.execute(
                "CREATE SCHEMA IF NOT EXISTS \"" + schemaName + "\"",
                "GRANT USAGE ON SCHEMA \"" + schemaName + "\" TO aura_anon, aura_authenticated",
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
        try {
            HttpResponse<String> r = http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + cdcPort + "/v1/db/" + projectId
                                    + "/schema/tables/"
                                    + java.net.URLEncoder.encode(table, java.nio.charset.StandardCharsets.UTF_8)
                                            .replace("+", "%20")
                                    + "/realtime"))
                            .header("apikey", tokens.serviceRole(projectId))
                            .PUT(HttpRequest.BodyPublishers.ofString("{\"enabled\":true}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new AssertionError("enable " + table + ": " + r.statusCode() + " " + r.body());
            }
        } catch (java.io.IOException e) {
            throw new AssertionError("control API unreachable", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    public String table(String name) {
        return "\"" + schema + "\".\"" + name.replace("\"", "\"\"") + "\"";
    }

    public void sql(String... statements) {
        pg.execute(statements);
    }

    public String health(int port) {
        try {
            return http.send(
                            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                                    .timeout(Duration.ofSeconds(2))
                                    .build(),
                            HttpResponse.BodyHandlers.ofString())
                    .body();
        } catch (Exception e) {
            return "unreachable: " + e;
        }
    }

    public void awaitHealth(int port, String contains, Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        String last = "";
        while (Instant.now().isBefore(deadline)) {
            last = health(port);
            if (last.replace(" ", "").contains(contains)) {
                return;
            }
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        throw new AssertionError("port " + port + " /health never contained " + contains + "; last: " + last
                + (cdc != null ? "\ncdc-worker log:\n" + cdc.logTail(40) : ""));
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
