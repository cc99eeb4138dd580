package dev.aura.realtime.e2e.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.ServiceProcess;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Nats;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.StorageType;
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
 * The cdc-worker jar on its own slot against a project schema, and a NATS subscriber that keeps
 * only what delivery tests need of each event (event id and the record's {@code id}), so a
 * million events fit in the test JVM.
 */
final class CdcJar implements AutoCloseable {
    static final String SECRET = "test-secret-test-secret-test-secret-42";
    final PostgresServer pg;
    final NatsServer natsServer;
    final String projectId = UUID.randomUUID().toString();
    final String schema = "project_" + projectId.replace('-', '_');
    final String slot =
            "aura_e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    final int httpPort = Ports.free();
    /** Event ids and record ids in arrival order (guarded by {@code this}). */
    final List<String> eventIds = new ArrayList<>();

    final List<Integer> recordIds = new ArrayList<>();
    private final Connection nats;
    private final Dispatcher dispatcher;
    private final ObjectMapper mapper = WireJson.mapper();
    private final HttpClient http = HttpClient.newHttpClient();
    ServiceProcess process;

    CdcJar(PostgresServer pg, NatsServer natsServer) throws Exception {
        this.pg = pg;
        this.natsServer = natsServer;
        nats = Nats.connect(natsServer.url());
        dispatcher = nats.createDispatcher(msg -> {
            try {
                JsonNode id = mapper.readTree(msg.getData())
                        .path("data")
                        .path("record")
                        .path("id");
                synchronized (this) {
                    eventIds.add(msg.getHeaders().getFirst(AuraHeaders.EVENT_ID));
                    recordIds.add(id.asInt());
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        dispatcher.setPendingLimits(10_000_000, 4L * 1024 * 1024 * 1024);
        dispatcher.subscribe(Subjects.CHANGES + "." + Subjects.encodeToken(projectId) + ".>");
        nats.flush(Duration.ofSeconds(5));
    }

    void start(List<String> jvmArgs) {
        Map<String, String> env = new HashMap<>();
        env.put("POSTGRES_REPLICATION_URL", pg.jdbcUrl());
        env.put("NATS_URL", natsServer.url());
        env.put("AURA_JWT_SECRET", SECRET);
        env.put("CDC_HTTP_PORT", Integer.toString(httpPort));
        env.put("CDC_SLOT_NAME", slot);
        env.put("CDC_TABLE_REFRESH_MS", "300");
        env.put("CDC_IDLE_BACKOFF_MS", "20");
        env.put("LEADER_ELECTION", "disabled");
        process = ServiceProcess.startJar("cdc-worker", Jars.cdcWorker(), env, jvmArgs);
        awaitActive(Duration.ofSeconds(60));
    }

    void awaitActive(Duration timeout) {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            try {
                if (health().path("cdc_active").asBoolean()) {
                    return;
                }
            } catch (Exception notYet) {
                // the HTTP port opens a moment after the JVM starts
            }
            sleep(100);
        }
        throw new AssertionError("cdc-worker not active within " + timeout + "\n" + process.logTail(40));
    }

    JsonNode health() throws Exception {
        return mapper.readTree(http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/health"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString())
                .body());
    }

    /** Creates the project schema and {@code table}, enables it, registers a subscriber, and proves the path with a probe row. */
    void enableTable(String table, String columns) throws Exception {
        pg.execute(
                "CREATE SCHEMA \"" + schema + "\"",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + projectId + "', '" + schema
                        + "')",
                "CREATE TABLE " + table(table) + columns,
                "INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + projectId + "', '"
                        + table + "')");
        try {
            nats.keyValueManagement().getStatus(SubscriptionEntry.BUCKET);
        } catch (Exception absent) {
            nats.keyValueManagement()
                    .create(KeyValueConfiguration.builder()
                            .name(SubscriptionEntry.BUCKET)
                            .storageType(StorageType.Memory)
                            .build());
        }
        SubscriptionEntry entry = new SubscriptionEntry(
                UUID.randomUUID().toString(),
                projectId,
                table,
                "*",
                null,
                "service_role",
                mapper.createObjectNode().put("role", "service_role").put("ref", projectId),
                System.currentTimeMillis() + 3_600_000,
                "e2e");
        nats.keyValue(SubscriptionEntry.BUCKET).put(entry.key(), mapper.writeValueAsBytes(entry));
        Instant deadline = Instant.now().plusSeconds(30);
        int probe = -1;
        while (received() == 0) {
            if (Instant.now().isAfter(deadline)) {
                throw new AssertionError("probe row never arrived\n" + process.logTail(40));
            }
            pg.execute("INSERT INTO " + table(table) + " VALUES (" + probe-- + ")");
            sleep(500);
        }
        sleep(300);
        clear();
    }

    String table(String name) {
        return "\"" + schema + "\".\"" + name + "\"";
    }

    synchronized int received() {
        return eventIds.size();
    }

    synchronized void clear() {
        eventIds.clear();
        recordIds.clear();
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() throws Exception {
        if (process != null) {
            process.stop();
        }
        nats.closeDispatcher(dispatcher);
        nats.close();
        pg.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '" + slot
                + "'");
    }
}
