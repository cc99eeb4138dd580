package dev.aura.realtime.e2e.cdc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RegistryEntries;
import dev.aura.realtime.testkit.ServiceEnv;
import dev.aura.realtime.testkit.ServiceHttp;
import dev.aura.realtime.testkit.ServiceProcess;
import dev.aura.realtime.testkit.Waits;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The cdc-worker jar on its own slot against a project schema, and a NATS subscriber that keeps
 * only what delivery tests need of each event (event id and the record's {@code id}), so a
 * million events fit in the test JVM.
 *
 * <p>As a JUnit extension ({@code @RegisterExtension final CdcJar cdc = CdcJar.onSharedServers(source)})
 * it is closed after each test. {@code source} is the worker's {@code CDC_SOURCE} ({@code stream}
 * or {@code poll}): the CDC tests run with both (docs/design.md C12).
 */
final class CdcJar implements AutoCloseable, AfterEachCallback {
    static final String SECRET = "test-secret-test-secret-test-secret-42";
    final PostgresServer pg;
    final NatsServer natsServer;
    /** {@code CDC_SOURCE} of the worker. */
    final String source;

    final String projectId = UUID.randomUUID().toString();
    final String schema = "project_" + projectId.replace('-', '_');
    final String slot =
            "aura_e_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    /** The worker's HTTP port; a new one when the previous was taken before the worker bound it. */
    int httpPort = Ports.forService();
    /** Event ids and record ids in arrival order (guarded by {@code this}). */
    final List<String> eventIds = new ArrayList<>();

    final List<Integer> recordIds = new ArrayList<>();
    private final Connection nats;
    private final Dispatcher dispatcher;
    private final ObjectMapper mapper = WireJson.mapper();
    private ServiceHttp http = new ServiceHttp(httpPort);
    ServiceProcess process;

    CdcJar(PostgresServer pg, NatsServer natsServer, String source) throws Exception {
        this.pg = pg;
        this.natsServer = natsServer;
        this.source = source;
        nats = natsServer.connect();
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

    /** On the JVM-wide Postgres and nats-server. */
    static CdcJar onSharedServers(String source) {
        try {
            return new CdcJar(PostgresServer.shared(), NatsServer.shared(), source);
        } catch (Exception e) {
            throw new IllegalStateException("cannot subscribe to NATS for the cdc-worker's events", e);
        }
    }

    void start(List<String> jvmArgs) {
        start(jvmArgs, java.util.Map.of());
    }

    /**
     * Starts the jar with {@code CDC_SOURCE} and {@code overrides}, and waits until it is active.
     * The machine is shared: another process may take the free port before the worker binds it,
     * so a bind failure is retried on another port (at most three times).
     */
    void start(List<String> jvmArgs, java.util.Map<String, String> overrides) {
        for (int attempt = 1; ; attempt++) {
            java.util.Map<String, String> env = ServiceEnv.cdcWorker(pg, natsServer, SECRET, slot, httpPort);
            env.put("CDC_SOURCE", source);
            env.putAll(overrides);
            process = ServiceProcess.startJar("cdc-worker", Jars.cdcWorker(), env, jvmArgs);
            try {
                process.waitForLog(
                        java.util.regex.Pattern.compile("http api listening on port"), Duration.ofSeconds(60));
                break;
            } catch (AssertionError e) {
                process.stop();
                if (attempt >= 3 || !process.logTail(40).contains("Address already in use")) {
                    throw e;
                }
                httpPort = Ports.forService();
                http = new ServiceHttp(httpPort);
            }
        }
        awaitActive(Duration.ofSeconds(60));
    }

    void awaitActive(Duration timeout) {
        http.awaitHealth(h -> h.path("cdc_active").asBoolean(), timeout, process);
    }

    /** Waits until {@code cdc_active} is {@code active}; returns that health document. */
    JsonNode awaitHealth(boolean active, Duration timeout) {
        return http.awaitHealth(
                h -> !h.isMissingNode() && h.path("cdc_active").asBoolean() == active, timeout, process);
    }

    /** The worker's {@code /health}; a missing node while it does not answer. */
    JsonNode health() {
        return http.healthJson();
    }

    /**
     * Creates the project schema and {@code table}, enables it, registers a subscriber, and proves
     * the path: probe rows (negative ids) are inserted until one arrives (the worker refreshes its
     * table list every 300 ms), then the received lists are cleared.
     */
    void enableTable(String table, String columns) {
        pg.execute(
                "CREATE SCHEMA \"" + schema + "\"",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + projectId + "', '" + schema
                        + "')",
                "CREATE TABLE " + table(table) + columns,
                "INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + projectId + "', '"
                        + table + "')");
        RegistryEntries.put(
                nats,
                RegistryEntries.binding(projectId, table, RegistryEntries.claims("service_role", projectId), "e2e"));
        AtomicInteger probes = new AtomicInteger();
        Waits.until(
                "a probe row at NATS",
                Duration.ofSeconds(30),
                Duration.ofMillis(500),
                () -> {
                    if (received() > 0) {
                        return true;
                    }
                    pg.execute("INSERT INTO " + table(table) + " VALUES (" + -probes.incrementAndGet() + ")");
                    return false;
                },
                () -> process.logTail(40));
        // Probes committed before the worker watched the table are skipped for good; the last one
        // is decoded after a delivered one, so it arrives, and after it (commit order) nothing else.
        int lastProbe = -probes.get();
        Waits.until(
                "probe row " + lastProbe + " at NATS",
                Duration.ofSeconds(30),
                Duration.ofMillis(20),
                () -> {
                    synchronized (this) {
                        return recordIds.contains(lastProbe);
                    }
                },
                () -> process.logTail(40));
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

    /** Waits until at least {@code count} events arrived (duplicates count). */
    void awaitReceived(int count, Duration timeout) {
        Waits.until(
                count + " events",
                timeout,
                Duration.ofMillis(20),
                () -> received() >= count,
                () -> "received " + received() + "\n" + process.logTail(40));
    }

    /** Waits until every id of {@code committed} arrived as a record id; fails naming the missing ones. */
    void awaitDelivered(Set<Integer> committed, Duration timeout, String context) {
        Set<Integer> missing = new TreeSet<>(committed);
        Waits.until(
                "every committed row delivered",
                timeout,
                Duration.ofMillis(100),
                () -> {
                    synchronized (this) {
                        missing.removeAll(recordIds);
                    }
                    return missing.isEmpty();
                },
                () -> missing.size() + " of " + committed.size() + " never delivered, e.g. "
                        + missing.stream().limit(20).toList() + " (" + context + ")\n" + process.logTail(30));
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        close();
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
