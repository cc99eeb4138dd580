package dev.aura.realtime.cdc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.aura.realtime.cdc.catalog.EnabledTables;
import dev.aura.realtime.cdc.catalog.EnabledTablesCache;
import dev.aura.realtime.cdc.catalog.PlatformDb;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.provision.Confinement;
import dev.aura.realtime.cdc.provision.PlatformSchema;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.cdc.registry.RegistryWatch;
import dev.aura.realtime.cdc.startup.LeadershipView;
import dev.aura.realtime.cdc.startup.Startup;
import dev.aura.realtime.cdc.startup.WorkerParts;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.cdc.tenant.TenantSqlStatus;
import dev.aura.realtime.common.wire.Subjects;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nats.client.Connection;
import io.nats.client.Options;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cdc-worker process as one object: wires every component, starts them in order and closes
 * them in reverse. {@code CdcWorkerMain} runs one; tests run several in one JVM.
 *
 * <p>Start order: metrics, HTTP (so {@code /health} answers at once), the NATS options
 * (reconnecting forever, also on the first connect) and the Postgres pool; then, on thread
 * {@code aura-bootstrap}, the named steps of {@link #steps} ({@link Startup}: each logged with its
 * time; those that need Postgres or NATS retried until they answer), built by {@link WorkerParts}:
 * NATS, the platform schema, the tenant login and pool, the registry watch, what answers ws-front's
 * requests, publishing, the late lane, the shards, the status publisher, the control API, each
 * project's own keys and finally leadership, which runs the slot reader while this process leads.
 */
public final class CdcWorker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CdcWorker.class);

    private final CdcConfig config;
    private final CdcConfig.Timings timings;
    private final Clock clock;
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CdcState state;
    private final PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final CdcMetrics metrics = new CdcMetrics(meters);
    private final Startup startup;
    private final LeadershipView leadership;
    private final RowFaultLedger faults;
    private volatile boolean bootstrapped;
    private volatile Thread bootstrap;
    private volatile WorkerParts parts;
    private HttpApi http;

    public CdcWorker(CdcConfig config, Clock clock) {
        this.config = config;
        this.timings = config.timings();
        this.clock = clock;
        this.state = new CdcState(clock, config.staleAfter());
        this.faults = new RowFaultLedger(clock);
        this.leadership = new LeadershipView(config.leader().mode().configValue(), state);
        this.startup = new Startup(this, closed::get, state, timings.startBackoff(), timings.startMaxBackoff());
    }

    /** Starts the worker; returns once the HTTP port listens (the rest comes up in the background). */
    public synchronized void start() throws Exception {
        http = new HttpApi(
                config.httpPort(),
                state,
                leadership::view,
                this::tenantSqlView,
                faults::snapshot,
                this::ready,
                meters,
                config.instanceId(),
                config.slotName());
        http.start();
        started.push(http);

        Options options = config.nats()
                .builder(Subjects.CDC_WORKER_INBOX)
                .connectionName("aura-cdc-worker " + config.instanceId())
                .maxReconnects(-1)
                .reconnectWait(timings.natsReconnectWait())
                .connectionTimeout(timings.connectTimeout())
                .connectionListener((conn, event) -> {
                    log.info("nats: {}", event);
                    RegistryWatch watch = registry();
                    if (watch != null) {
                        watch.onConnectionEvent(event);
                    }
                })
                .build();
        // NATS is connected by the bootstrap thread: a worker started before NATS must answer
        // /health and stop on SIGTERM meanwhile (start() holds this monitor, close() needs it).

        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(config.postgresUrl());
        hc.setPoolName("aura-cdc-db");
        hc.setMaximumPoolSize(config.poolSize());
        hc.setInitializationFailTimeout(-1);
        hc.setConnectionTimeout(timings.connectTimeout().toMillis());
        hc.addDataSourceProperty("ApplicationName", "aura-cdc-worker-pool");
        HikariDataSource pool = new HikariDataSource(hc);
        started.push(pool);
        // the tenant pool (TenantDb) is opened during bootstrap, once its login is provisioned

        PlatformDb platform = new PlatformDb(pool);
        WorkerParts p = new WorkerParts(
                new WorkerParts.Worker(config, clock, state, faults, metrics, meters, leadership),
                platform,
                started,
                this,
                closed::get);
        parts = p;
        List<Startup.Step> steps = steps(p, options, platform);
        bootstrap = Thread.ofPlatform().name("aura-bootstrap").daemon().start(() -> bootstrap(steps));
    }

    /** The start-up, in order; each step's work is {@link WorkerParts}'. */
    private List<Startup.Step> steps(WorkerParts p, Options natsOptions, PlatformDb platform) {
        List<Startup.Step> steps = new ArrayList<>();
        steps.add(Startup.retried(
                "nats connect",
                CdcReason.NATS_UNAVAILABLE,
                LogCode.NATS_CONNECT_FAILED,
                () -> p.connectNats(natsOptions)));
        steps.add(Startup.retried(
                "platform bootstrap",
                CdcReason.POSTGRES_UNAVAILABLE,
                LogCode.PLATFORM_BOOTSTRAP_FAILED,
                () -> PlatformSchema.ensure(platform)));
        if (config.tenantSql().provisioned()) {
            steps.add(Startup.retried(
                    "tenant login " + config.tenantSql().provisionedLogin(),
                    CdcReason.POSTGRES_UNAVAILABLE,
                    LogCode.PLATFORM_BOOTSTRAP_FAILED,
                    p::provisionTenantLogin));
        }
        steps.add(Startup.waiting("tenant pool", p::openTenantPool));
        steps.add(Startup.step("registry watch", p::makeRegistryWatch));
        steps.add(Startup.retried(
                "subscription registry", CdcReason.NATS_UNAVAILABLE, LogCode.REGISTRY_WATCH_FAILED, p::watchRegistry));
        steps.add(Startup.step("ws-front's requests and the realtime upkeep", p::startTenantServices));
        steps.add(Startup.step("publishing", p::startPublishing));
        steps.add(Startup.step("late lane", p::startLateLane));
        steps.add(Startup.step("shards", p::startShards));
        steps.add(Startup.step("status", p::startStatus));
        steps.add(Startup.step("control API", () -> p.mountControlApi(http)));
        steps.add(Startup.step("project keys", () -> p.startProjectKeys(http)));
        steps.add(Startup.step("leadership", p::startLeadership));
        return steps;
    }

    private void bootstrap(List<Startup.Step> steps) {
        try {
            if (startup.run(steps)) {
                bootstrapped = true;
                log.info(
                        "cdc-worker {} started (slot {}, source {}, {} shards)",
                        config.instanceId(),
                        config.slotName(),
                        config.source().configValue(),
                        config.numShards());
            }
        } catch (Exception e) {
            log.error("[StartupFailed] cdc-worker start-up failed", e);
            state.failed(CdcReason.ERROR, "start-up failed: " + e);
        }
    }

    private RegistryWatch registry() {
        WorkerParts p = parts;
        return p == null ? null : p.registry();
    }

    private TenantDb tenantDb() {
        WorkerParts p = parts;
        return p == null ? null : p.tenant();
    }

    private HttpApi.TenantSqlView tenantSqlView() {
        TenantDb db = tenantDb();
        if (db == null) {
            String login = config.tenantSql().provisionedLogin();
            return new HttpApi.TenantSqlView(
                    false, login, TenantSqlStatus.STARTING, "not set up yet", List.of(), Confinement.Status.STARTING);
        }
        TenantSqlStatus s = db.status();
        RealtimeSchemas schemas = parts.realtimeSchemas();
        return new HttpApi.TenantSqlView(
                s.usable(),
                s.login(),
                s.reasonCode(),
                s.reason(),
                schemas == null ? List.of() : schemas.exposed(),
                schemas == null
                        ? Confinement.Status.STARTING
                        : schemas.confinement().status());
    }

    private boolean ready() {
        WorkerParts p = parts;
        Connection n = p == null ? null : p.nats();
        return bootstrapped && n != null && n.getStatus() == Connection.Status.CONNECTED;
    }

    /** Entries in this worker's view of the subscription registry (0 before start-up completes). */
    public int registrySize() {
        RegistryWatch watch = registry();
        return watch == null ? 0 : watch.size();
    }

    /** The enabled-table list the poll loop last read (empty before start-up completes). */
    public EnabledTables enabledTables() {
        WorkerParts p = parts;
        EnabledTablesCache cache = p == null ? null : p.tables();
        return cache == null ? EnabledTables.empty() : cache.current();
    }

    /**
     * Verifies the tenant login now, as the periodic check does, and returns the result
     * ({@code starting} before start-up opened the tenant pool).
     */
    public TenantSqlStatus verifyTenantSql() {
        TenantDb db = tenantDb();
        if (db == null) {
            return new TenantSqlStatus(false, config.tenantSql().provisionedLogin(), TenantSqlStatus.STARTING, null);
        }
        db.refreshStatus();
        return db.status();
    }

    public CdcState state() {
        return state;
    }

    public int httpPort() {
        return http.port();
    }

    /** The worker's meters, as {@code /metrics} serves them. */
    public PrometheusMeterRegistry meters() {
        return meters;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Thread starting = bootstrap;
        if (starting != null) {
            starting.interrupt(); // ends a start-up retry at once
        }
        synchronized (this) {
            while (!started.isEmpty()) {
                AutoCloseable c = started.pop();
                try {
                    c.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    log.warn("[StopFailed] error while stopping {}: {}", c, e.toString());
                }
            }
        }
        log.info("cdc-worker {} stopped", config.instanceId());
    }
}
