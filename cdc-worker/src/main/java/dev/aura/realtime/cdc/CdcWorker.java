package dev.aura.realtime.cdc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.cdc.config.TenantSqlConfig;
import dev.aura.realtime.cdc.control.ControlApi;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.leader.LeaderElection;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.pipeline.EventBuilder;
import dev.aura.realtime.cdc.pipeline.LateLane;
import dev.aura.realtime.cdc.pipeline.RowFaults;
import dev.aura.realtime.cdc.pipeline.ShardedPipeline;
import dev.aura.realtime.cdc.platform.ClientRoles;
import dev.aura.realtime.cdc.platform.Confinement;
import dev.aura.realtime.cdc.platform.EnabledTables;
import dev.aura.realtime.cdc.platform.EnabledTablesCache;
import dev.aura.realtime.cdc.platform.PlatformDb;
import dev.aura.realtime.cdc.platform.PlatformSchema;
import dev.aura.realtime.cdc.platform.ProjectCatalog;
import dev.aura.realtime.cdc.platform.ProjectLimitsTable;
import dev.aura.realtime.cdc.platform.RealtimeSchemas;
import dev.aura.realtime.cdc.platform.TableSecurity;
import dev.aura.realtime.cdc.platform.TenantLoginProvisioning;
import dev.aura.realtime.cdc.platform.TypeCatalog;
import dev.aura.realtime.cdc.publish.EventPublisher;
import dev.aura.realtime.cdc.publish.HistoryStreams;
import dev.aura.realtime.cdc.publish.ProjectStreams;
import dev.aura.realtime.cdc.publish.StatusPublisher;
import dev.aura.realtime.cdc.registry.RegistryMaxAge;
import dev.aura.realtime.cdc.registry.RegistryWatch;
import dev.aura.realtime.cdc.rls.RlsPolicy;
import dev.aura.realtime.cdc.slot.ReaderSettings;
import dev.aura.realtime.cdc.slot.SlotManager;
import dev.aura.realtime.cdc.slot.SlotPoller;
import dev.aura.realtime.cdc.slot.SlotReader;
import dev.aura.realtime.cdc.slot.SlotStreamer;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.cdc.tenant.TenantSqlStatus;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.Subjects;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.time.Clock;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cdc-worker process as one object: wires every component, starts them in order and closes
 * them in reverse. {@code CdcWorkerMain} runs one; tests run several in one JVM.
 *
 * <p>Start order: metrics, HTTP (so {@code /health} answers at once), NATS (reconnecting
 * forever, also on the first connect), the Postgres pool, then on thread {@code aura-bootstrap}
 * (retrying until Postgres and NATS answer) the platform schema, the registry watch, the
 * subscription check responder, the RLS shards, the status publisher and finally leadership,
 * which runs the poll loop while this process leads.
 *
 * <p>Two Postgres logins, two pools: {@link PlatformDb} ({@code POSTGRES_URL}: platform tables,
 * catalogs, the control API) and {@link TenantDb} (statements that evaluate tenant-authored SQL,
 * on a login with no privilege beyond the client roles, provisioned here from the platform login
 * unless {@code POSTGRES_TENANT_URL} names one; docs/security.md).
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
    private final StartRetry retry;
    private volatile boolean bootstrapped;
    private volatile Connection nats;
    private volatile Thread bootstrap;
    private final LeadershipView leadership;
    private volatile EnabledTablesCache tables;
    private volatile RegistryWatch subscriptions;
    private volatile TenantDb tenantDb;
    private volatile RealtimeSchemas realtimeSchemas;
    private volatile ProjectStreams heldChanges;
    private final RowFaultLedger faults;
    private HttpApi http;

    /** Most changes the late lane takes from one project in one turn. */
    private static final int LATE_BATCH_CHANGES = 64;
    /** How often the late lane looks for lanes that hold changes (a re-publish from the quarantine). */
    private static final java.time.Duration LATE_SWEEP_EVERY = java.time.Duration.ofSeconds(2);
    /** An empty late lane's stream is deleted after this long. */
    private static final java.time.Duration LATE_DELETE_IDLE_AFTER = java.time.Duration.ofMinutes(1);

    public CdcWorker(CdcConfig config, Clock clock) {
        this.config = config;
        this.timings = config.timings();
        this.clock = clock;
        this.state = new CdcState(clock, config.staleAfter());
        this.faults = new RowFaultLedger(clock);
        this.leadership = new LeadershipView(config.leader().mode().configValue(), state);
        this.retry = new StartRetry(state, timings.startBackoff(), timings.startMaxBackoff(), closed::get);
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
                    RegistryWatch watch = subscriptions;
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

        bootstrap = Thread.ofPlatform().name("aura-bootstrap").daemon().start(() -> bootstrap(options, pool));
    }

    private void bootstrap(Options natsOptions, HikariDataSource pool) {
        PlatformDb platform = new PlatformDb(pool);
        try {
            // Once connected, jnats reconnects on its own (maxReconnects -1); until the first
            // connection, each attempt fails fast and is retried here, interruptible by close().
            if (!retry.untilUp("nats connect", CdcReason.NATS_UNAVAILABLE, LogCode.NATS_CONNECT_FAILED, () -> {
                Connection c = Nats.connect(natsOptions);
                synchronized (this) {
                    if (closed.get()) {
                        c.close();
                        return;
                    }
                    nats = c;
                    started.push(c::close);
                }
            })) {
                return;
            }
            if (closed.get()) {
                return;
            }
            RegistryWatch watch = new RegistryWatch(
                    nats,
                    clock,
                    new RegistryWatch.Settings(
                            timings.registryResyncPeriod(),
                            timings.registryLoadTimeout(),
                            timings.registrySyncTimeout(),
                            timings.registryReputTimeout(),
                            KvBuckets.registry(config.registryBucketMaxBytes())),
                    metrics);
            if (!retry.untilUp(
                    "platform bootstrap",
                    CdcReason.POSTGRES_UNAVAILABLE,
                    LogCode.PLATFORM_BOOTSTRAP_FAILED,
                    () -> PlatformSchema.ensure(platform))) {
                return;
            }
            TenantDb tenant = openTenantSql(platform);
            if (tenant == null) {
                return;
            }
            synchronized (this) {
                if (closed.get()) {
                    return;
                }
                subscriptions = watch;
                started.push(watch);
            }
            // a worker started before NATS must come up on its own
            if (!retry.untilUp(
                    "subscription registry", CdcReason.NATS_UNAVAILABLE, LogCode.REGISTRY_WATCH_FAILED, watch::start)) {
                return;
            }
            synchronized (this) {
                if (!closed.get()) {
                    startCdc(platform, tenant, watch);
                }
            }
        } catch (Exception e) {
            log.error("[StartupFailed] cdc-worker start-up failed", e);
            state.failed(CdcReason.ERROR, "start-up failed: " + e);
        }
    }

    /**
     * Provisions the tenant login when the worker provisions it (every replica, every start: the
     * same login and password, docs/security.md), then opens the tenant pool, which verifies the
     * login. A platform login that may not provision leaves tenant SQL off, said in {@code /health}.
     *
     * @return null when the worker was closed meanwhile
     */
    private TenantDb openTenantSql(PlatformDb platform) {
        TenantSqlConfig t = config.tenantSql();
        String[] notPermitted = {null};
        if (t.provisioned()
                && !retry.untilUp(
                        "tenant login " + t.provisionedLogin(),
                        CdcReason.POSTGRES_UNAVAILABLE,
                        LogCode.PLATFORM_BOOTSTRAP_FAILED,
                        () -> {
                            if (TenantLoginProvisioning.ensure(platform, t.provisionedLogin(), t.provisionedPassword())
                                    instanceof TenantLoginProvisioning.Outcome.NotPermitted np) {
                                notPermitted[0] = np.why();
                            }
                        })) {
            return null;
        }
        TenantDb db = TenantDb.open(
                new TenantDb.Settings(
                        t.url(),
                        t.provisionedLogin(),
                        t.provisionedPassword(),
                        t.statementTimeout(),
                        config.containment().lateCheckTimeout(),
                        t.lockTimeout(),
                        config.numShards() + 1, // the shards and the late lane (docs/design.md C14)
                        timings.tenantJoinConnections(),
                        timings.connectTimeout(),
                        ClientRoles.ALL,
                        timings.tenantStatusRecheck(),
                        config.jwtSecret()),
                notPermitted[0] == null
                        ? null
                        : notPermitted[0] + "; set POSTGRES_TENANT_URL to an unprivileged login (docs/security.md)");
        synchronized (this) {
            if (closed.get()) {
                db.close();
                return null;
            }
            started.push(db);
            tenantDb = db;
        }
        return db;
    }

    /** Starts everything after the platform schema and the registry; called once, holding this. */
    private void startCdc(PlatformDb platform, TenantDb tenant, RegistryWatch watch) throws Exception {
        TableSecurity security = new TableSecurity(platform, clock, timings.tableSecurityTtl());
        RealtimeSchemas realtimeSchemas = TenantServices.start(
                config,
                timings,
                nats,
                platform,
                tenant,
                security,
                () -> state.snapshot().leader(),
                metrics,
                started);
        this.realtimeSchemas = realtimeSchemas;

        ProjectLimitsTable limits =
                new ProjectLimitsTable(platform, config.history().defaultResumeSeconds());
        // the registry keeps parked entries for the longest resume window (docs/design.md R)
        RegistryMaxAge registryAge = new RegistryMaxAge(
                nats, KvBuckets.registry(config.registryBucketMaxBytes()), limits::longestWindow, watch);
        registryAge.start(config.history().refresh());
        started.push(registryAge);
        HistoryStreams history = new HistoryStreams(
                nats,
                limits,
                new HistoryStreams.Settings(
                        config.history().fileStorage(),
                        config.history().replicas(),
                        config.history().refresh()));
        history.start();
        started.push(history);
        EventPublisher publisher = new EventPublisher(nats, config.instanceId(), history::covers);
        started.push(publisher);
        // one project's faults are its own (docs/design.md C13, C14): quarantines and late lanes
        CdcConfig.Containment c = config.containment();
        ProjectStreams held = new ProjectStreams(
                nats,
                publisher,
                new ProjectStreams.Settings(
                        config.history().fileStorage(),
                        config.history().replicas(),
                        c.lateLaneBytes(),
                        c.quarantineBytes(),
                        c.quarantineMaxAge()));
        this.heldChanges = held;
        RowFaults.Keeper quarantine = (change, why) -> held.store(ProjectStreams.Kind.QUARANTINE, change, why);
        LateLane late = new LateLane(
                held,
                publisher,
                quarantine,
                metrics,
                faults,
                new LateLane.Settings(
                        c.lateLaneBytes(),
                        LATE_BATCH_CHANGES,
                        timings.flushTimeout(),
                        LATE_SWEEP_EVERY,
                        LATE_DELETE_IDLE_AFTER),
                clock);
        late.start();
        started.push(late);
        ShardedPipeline pipeline = new ShardedPipeline(
                new ShardedPipeline.Settings(
                        config.numShards(),
                        config.shardQueueBytes(),
                        config.unconfirmedBytesPerShard(),
                        timings.flushTimeout()),
                new EventBuilder(new TypeCatalog(platform), config.maxRecordBytes()),
                watch,
                new RlsPolicy(
                        tenant,
                        security,
                        metrics,
                        config.tenantSql().statementTimeout(),
                        false,
                        realtimeSchemas::ready),
                publisher,
                metrics,
                new ShardedPipeline.Containment(
                        quarantine,
                        faults,
                        late,
                        new RlsPolicy(tenant, security, metrics, c.lateCheckTimeout(), true, realtimeSchemas::ready)));
        pipeline.start();
        started.push(pipeline);

        StatusPublisher status = new StatusPublisher(state, publisher, metrics, config.instanceId(), clock);
        status.start(timings.statusTick());
        started.push(status);

        EnabledTablesCache cache = new EnabledTablesCache(platform, config.tableRefresh(), clock);
        tables = cache;
        http.mount(
                "/v1/",
                new ControlApi(
                        new ProjectCatalog(platform),
                        new JwtVerifier(config.jwt(), clock),
                        cache::invalidate,
                        timings.controlLockTimeout(),
                        () -> heldChanges));
        ReaderSettings readerSettings = new ReaderSettings(
                config.replicationUrl(),
                config.batchSize(),
                config.fetchSize(),
                config.fetchBytes(),
                config.maxRecordBytes(),
                config.idleBackoff(),
                timings.pollMaxBackoff(),
                config.redecodeWarnBytes(),
                timings.streamStatusInterval(),
                timings.streamConfirmEvery());
        SlotManager slotManager = new SlotManager(config.slotName());
        SlotReader.GapListener gaps = (from, to) -> status.publishNow();
        SlotReader reader = config.source() == CdcSource.STREAM
                ? new SlotStreamer(readerSettings, slotManager, pipeline, cache, state, metrics, gaps)
                : new SlotPoller(readerSettings, slotManager, pipeline, cache, state, metrics, gaps);
        LeaderElection elect = LeaderElection.fromConfig(
                config.leader(),
                gate -> {
                    pipeline.useGate(gate);
                    late.lead(gate); // before any change is read: held changes keep their order
                    state.leading(true);
                    try {
                        reader.run(gate);
                    } finally {
                        late.stopLeading();
                        state.leading(false);
                    }
                },
                meters);
        leadership.use(elect);
        elect.start();
        started.push(elect);
        status.syncWith(leadership::sync);
        bootstrapped = true;
        log.info(
                "cdc-worker {} started (slot {}, source {}, {} shards)",
                config.instanceId(),
                config.slotName(),
                config.source().configValue(),
                config.numShards());
    }

    private HttpApi.TenantSqlView tenantSqlView() {
        TenantDb db = tenantDb;
        if (db == null) {
            String login = config.tenantSql().provisionedLogin();
            return new HttpApi.TenantSqlView(
                    false, login, TenantSqlStatus.STARTING, "not set up yet", List.of(), Confinement.Status.STARTING);
        }
        TenantSqlStatus s = db.status();
        RealtimeSchemas schemas = realtimeSchemas;
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
        Connection n = nats;
        return bootstrapped && n != null && n.getStatus() == Connection.Status.CONNECTED;
    }

    /** Entries in this worker's view of the subscription registry (0 before start-up completes). */
    public int registrySize() {
        RegistryWatch watch = subscriptions;
        return watch == null ? 0 : watch.size();
    }

    /** The enabled-table list the poll loop last read (empty before start-up completes). */
    public EnabledTables enabledTables() {
        EnabledTablesCache cache = tables;
        return cache == null ? EnabledTables.empty() : cache.current();
    }

    /**
     * Verifies the tenant login now, as the periodic check does, and returns the result
     * ({@code starting} before start-up opened the tenant pool).
     */
    public TenantSqlStatus verifyTenantSql() {
        TenantDb db = tenantDb;
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
