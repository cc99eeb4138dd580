package dev.aura.realtime.cdc.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.health.SlotInfo;
import dev.aura.realtime.cdc.provision.Confinement;
import dev.aura.realtime.common.wire.WireJson;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cdc-worker's HTTP port ({@code CDC_HTTP_PORT}): {@code GET /health} (liveness: 200 while
 * the process runs, JSON with {@code cdc_active}), {@code GET /ready} (readiness: 200 once
 * Postgres and NATS are set up), {@code GET /metrics} (Prometheus text) and the control API
 * under {@code /v1/}. Served by the JDK's HTTP server on virtual threads.
 */
public final class HttpApi implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HttpApi.class);

    /** Leadership as /health shows it. */
    public record LeaderView(boolean leader, String holder, long leaseEpoch, String mode) {}

    /**
     * Tenant SQL as /health shows it ({@code tenant_sql}; docs/security.md): whether RLS checks
     * and filter casts run, as which login, and why not; {@code exposedProjects}: the project schemas
     * roles of other projects may use ({@code project_id schema grantee}, docs/security.md);
     * {@code confinement}: whether Postgres keeps the objects that confine projects uneditable by
     * them (when not, persisted broadcasts and the janitor are refused).
     */
    public record TenantSqlView(
            boolean rlsChecks,
            String login,
            String reasonCode,
            String reason,
            List<String> exposedProjects,
            Confinement.Status confinement) {}

    private final HttpServer server;
    private final ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor();
    private final ObjectMapper mapper = WireJson.mapper();
    private final CdcState state;
    private final Supplier<LeaderView> leader;
    private final Supplier<TenantSqlView> tenantSql;
    private final Supplier<RowFaultLedger.Snapshot> faults;
    private final BooleanSupplier ready;
    private final PrometheusMeterRegistry registry;
    private final String instance;
    private final String slotName;

    public HttpApi(
            int port,
            CdcState state,
            Supplier<LeaderView> leader,
            Supplier<TenantSqlView> tenantSql,
            Supplier<RowFaultLedger.Snapshot> faults,
            BooleanSupplier ready,
            PrometheusMeterRegistry registry,
            String instance,
            String slotName)
            throws IOException {
        this.state = state;
        this.leader = leader;
        this.tenantSql = tenantSql;
        this.faults = faults;
        this.ready = ready;
        this.registry = registry;
        this.instance = instance;
        this.slotName = slotName;
        this.server = HttpServer.create(new InetSocketAddress(port), 128);
        server.setExecutor(executor);
        server.createContext("/health", this::health);
        server.createContext("/ready", this::ready);
        server.createContext("/metrics", this::metrics);
    }

    /** Mounts a handler (e.g. the control API) under a path prefix. */
    public void mount(String prefix, HttpHandler handler) {
        server.createContext(prefix, handler);
    }

    public void start() {
        server.start();
        log.info("http api listening on port {}", port());
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private void health(HttpExchange ex) throws IOException {
        CdcState.Snapshot s = state.snapshot();
        LeaderView l = leader.get();
        ObjectNode body = mapper.createObjectNode();
        body.put("status", "ok");
        body.put("cdc_active", s.active());
        body.put("leader", l.leader());
        body.put("holder", l.holder());
        body.put("lease_epoch", l.leaseEpoch());
        body.put("leader_election", l.mode());
        body.put("instance", instance);
        body.put("reason", s.reason() == null ? null : s.reason().code() + ": " + s.detail());
        body.put("reason_code", s.reason() == null ? null : s.reason().code());
        ObjectNode slot = body.putObject("slot");
        slot.put("name", slotName);
        SlotInfo info = s.slot();
        if (info != null) {
            slot.put("wal_status", info.walStatus());
            if (info.safeWalSize() == null) {
                slot.putNull("safe_wal_size");
            } else {
                slot.put("safe_wal_size", info.safeWalSize());
            }
            slot.put("restart_lsn", String.valueOf(info.restartLsn()));
            slot.put("confirmed_flush_lsn", String.valueOf(info.confirmedFlushLsn()));
            slot.put("lag_bytes", info.lagBytes());
            slot.put("redecode_bytes", info.redecodeBytes());
            slot.put("active_pid", info.activePid());
        }
        TenantSqlView t = tenantSql.get();
        var tenant = body.putObject("tenant_sql")
                .put("rls_checks", t.rlsChecks())
                .put("login", t.login())
                .put("reason_code", t.reasonCode())
                .put("reason", t.reason());
        var exposed = tenant.putArray("exposed_projects");
        t.exposedProjects().forEach(exposed::add);
        tenant.putObject("confinement")
                .put("guarded", t.confinement().guarded())
                .put("reason_code", t.confinement().reasonCode())
                .put("reason", t.confinement().reason());
        quarantine(body, faults.get());
        body.put("last_poll_ok_at_ms", s.lastPollOkAtMs());
        body.put("polls", s.polls());
        if (s.gapTo() != null) {
            body.putObject("last_gap").put("from_lsn", s.gapFrom()).put("to_lsn", s.gapTo());
        }
        send(ex, 200, "application/json", mapper.writeValueAsBytes(body));
    }

    /**
     * {@code quarantine}: changes quarantined by this process (per project, the most recent 100),
     * and {@code late_lane}: the projects whose changes wait in their late lane now, with the bytes
     * (docs/operations.md, "Quarantine"). Identifiers and codes only.
     */
    private static void quarantine(ObjectNode body, RowFaultLedger.Snapshot f) {
        ObjectNode q = body.putObject("quarantine");
        q.put("changes", f.rows());
        ObjectNode projects = q.putObject("projects");
        f.projects()
                .forEach((id, p) -> projects.putObject(id)
                        .put("changes", p.rows())
                        .put("last_fault", p.lastFault().code())
                        .put("last_at", p.lastAt().toString()));
        ObjectNode late = body.putObject("late_lane");
        late.put(
                "bytes",
                f.lateBytes().values().stream().mapToLong(Long::longValue).sum());
        ObjectNode lateProjects = late.putObject("projects");
        f.lateBytes().forEach(lateProjects::put);
    }

    private void ready(HttpExchange ex) throws IOException {
        boolean ok = ready.getAsBoolean();
        send(ex, ok ? 200 : 503, "application/json", ("{\"ready\":" + ok + "}").getBytes(StandardCharsets.UTF_8));
    }

    private void metrics(HttpExchange ex) throws IOException {
        send(
                ex,
                200,
                "text/plain; version=0.0.4; charset=utf-8",
                registry.scrape().getBytes(StandardCharsets.UTF_8));
    }

    /** Writes a complete response and closes the exchange. */
    public static void send(HttpExchange ex, int status, String contentType, byte[] body) throws IOException {
        ex.getResponseHeaders().set("Content-Type", contentType);
        ex.getResponseHeaders().set("Cache-Control", "no-store");
        ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
