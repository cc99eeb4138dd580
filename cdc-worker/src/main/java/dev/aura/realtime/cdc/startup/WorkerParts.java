package dev.aura.realtime.cdc.startup;

import dev.aura.realtime.cdc.catalog.CommitVisibility;
import dev.aura.realtime.cdc.catalog.EnabledTablesCache;
import dev.aura.realtime.cdc.catalog.PlatformDb;
import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.catalog.ProjectLimitsTable;
import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.catalog.TypeCatalog;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.cdc.config.TenantSqlConfig;
import dev.aura.realtime.cdc.control.ControlApi;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.identity.ClientRoles;
import dev.aura.realtime.cdc.leader.LeaderElection;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.pipeline.EventBuilder;
import dev.aura.realtime.cdc.pipeline.LateLane;
import dev.aura.realtime.cdc.pipeline.RowFaults;
import dev.aura.realtime.cdc.pipeline.ShardedPipeline;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.cdc.provision.TenantLoginProvisioning;
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
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.KvBuckets;
import io.micrometer.core.instrument.MeterRegistry;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.Deque;
import java.util.function.BooleanSupplier;

/**
 * What the cdc-worker's start-up builds, a method per step ({@code CdcWorker} lists the steps in
 * their order and runs them with {@link Startup}). Every part is kept on {@code started}, which
 * the worker closes in reverse order; a part started after the worker was closed is closed at
 * once. The parts {@code /health} shows are read from any thread, the rest only by the start-up.
 *
 * <p>Two Postgres logins, two pools: {@link PlatformDb} ({@code POSTGRES_URL}: platform tables,
 * catalogs, the control API) and {@link TenantDb} (statements that evaluate tenant-authored SQL,
 * on a login with no privilege beyond the client roles, provisioned here from the platform login
 * unless {@code POSTGRES_TENANT_URL} names one; docs/security.md).
 */
public final class WorkerParts {
    /** Most changes the late lane takes from one project in one turn. */
    private static final int LATE_BATCH_CHANGES = 64;
    /** How often the late lane looks for lanes that hold changes (a re-publish from the quarantine). */
    private static final Duration LATE_SWEEP_EVERY = Duration.ofSeconds(2);
    /** An empty late lane's stream is deleted after this long. */
    private static final Duration LATE_DELETE_IDLE_AFTER = Duration.ofMinutes(1);

    /** What the worker shares with its parts. */
    public record Worker(
            CdcConfig config,
            Clock clock,
            CdcState state,
            RowFaultLedger faults,
            CdcMetrics metrics,
            MeterRegistry meters,
            LeadershipView leadership) {}

    private final CdcConfig config;
    private final CdcConfig.Timings timings;
    private final Clock clock;
    private final CdcState state;
    private final RowFaultLedger faults;
    private final CdcMetrics metrics;
    private final MeterRegistry meters;
    private final LeadershipView leadership;
    private final PlatformDb platform;
    private final Deque<AutoCloseable> started;
    private final Object lock;
    private final BooleanSupplier closed;

    // what /health and the worker's accessors read, from any thread
    private volatile Connection nats;
    private volatile RegistryWatch registry;
    private volatile TenantDb tenant;
    private volatile RealtimeSchemas realtimeSchemas;
    private volatile ProjectStreams heldChanges;
    private volatile EnabledTablesCache tables;

    // the start-up thread's
    private String tenantLoginRefused;
    private TableSecurity security;
    private EventPublisher publisher;
    private RowFaults.Keeper quarantine;
    private LateLane late;
    private ShardedPipeline pipeline;
    private StatusPublisher status;

    /**
     * @param started where each part is kept for the worker's close
     * @param lock the worker's lock, held while it closes
     * @param closed whether the worker was closed
     */
    public WorkerParts(
            Worker worker, PlatformDb platform, Deque<AutoCloseable> started, Object lock, BooleanSupplier closed) {
        this.config = worker.config();
        this.timings = config.timings();
        this.clock = worker.clock();
        this.state = worker.state();
        this.faults = worker.faults();
        this.metrics = worker.metrics();
        this.meters = worker.meters();
        this.leadership = worker.leadership();
        this.platform = platform;
        this.started = started;
        this.lock = lock;
        this.closed = closed;
    }

    /**
     * Connects to NATS. Once connected, jnats reconnects on its own (maxReconnects -1); until the
     * first connection, each attempt fails fast and is retried, interruptible by the worker's close.
     */
    public void connectNats(Options options) throws IOException, InterruptedException {
        Connection c = Nats.connect(options);
        synchronized (lock) {
            if (closed.getAsBoolean()) {
                c.close();
                return;
            }
            nats = c;
            started.push(c::close);
        }
    }

    /**
     * Provisions the tenant login, when the worker provisions it (every replica, every start: the
     * same login and password, docs/security.md). A platform login that may not provision it leaves
     * tenant SQL off, said in {@code /health}.
     */
    public void provisionTenantLogin() throws SQLException {
        TenantSqlConfig t = config.tenantSql();
        if (TenantLoginProvisioning.ensure(platform, t.provisionedLogin(), t.provisionedPassword())
                instanceof TenantLoginProvisioning.Outcome.NotPermitted np) {
            tenantLoginRefused = np.why();
        }
    }

    /** Opens the tenant pool, which verifies the login (outside the worker's lock: it may wait on Postgres). */
    public void openTenantPool() {
        TenantSqlConfig t = config.tenantSql();
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
                tenantLoginRefused == null
                        ? null
                        : tenantLoginRefused + "; set POSTGRES_TENANT_URL to an unprivileged login (docs/security.md)");
        synchronized (lock) {
            if (closed.getAsBoolean()) {
                db.close();
                return;
            }
            started.push(db);
            tenant = db;
        }
    }

    /** Makes the registry watch (NATS connection events reach it from now on); {@link #watchRegistry} starts it. */
    public void makeRegistryWatch() throws IOException {
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
        registry = watch;
        started.push(watch);
    }

    /** Watches the registry bucket and waits for its first load (a worker started before NATS comes up on its own). */
    public void watchRegistry() throws IOException, JetStreamApiException, InterruptedException {
        registry.start();
    }

    /** What answers ws-front's requests and the realtime upkeep ({@link TenantServices}). */
    public void startTenantServices() throws Exception {
        security = new TableSecurity(platform, clock, timings.tableSecurityTtl());
        realtimeSchemas = TenantServices.start(
                config,
                timings,
                nats,
                platform,
                tenant,
                security,
                () -> state.snapshot().leader(),
                metrics,
                started);
    }

    /** The registry's max age (kept for the longest resume window), history streams, publisher, held changes. */
    public void startPublishing() throws Exception {
        ProjectLimitsTable limits =
                new ProjectLimitsTable(platform, config.history().defaultResumeSeconds());
        // the registry keeps parked entries for the longest resume window (docs/design.md R)
        RegistryMaxAge registryAge = new RegistryMaxAge(
                nats, KvBuckets.registry(config.registryBucketMaxBytes()), limits::longestWindow, registry);
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
        publisher = new EventPublisher(nats, config.instanceId(), history::covers);
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
        quarantine = (change, why) -> held.store(ProjectStreams.Kind.QUARANTINE, change, why);
    }

    /** The late lane, where a slow project's changes wait (docs/design.md C14). */
    public void startLateLane() {
        CdcConfig.Containment c = config.containment();
        late = new LateLane(
                heldChanges,
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
    }

    /** The shards: build, match, RLS, publish. */
    public void startShards() {
        CdcConfig.Containment c = config.containment();
        CommitVisibility visibility = new CommitVisibility(platform, CommitVisibility.WAIT);
        pipeline = new ShardedPipeline(
                new ShardedPipeline.Settings(
                        config.numShards(),
                        config.shardQueueBytes(),
                        config.unconfirmedBytesPerShard(),
                        timings.flushTimeout()),
                new EventBuilder(new TypeCatalog(platform), config.maxRecordBytes()),
                registry,
                new RlsPolicy(
                        tenant,
                        security,
                        metrics,
                        config.tenantSql().statementTimeout(),
                        false,
                        c.shardCheckBudget(),
                        realtimeSchemas::ready,
                        visibility),
                publisher,
                metrics,
                new ShardedPipeline.Containment(
                        quarantine,
                        faults,
                        late,
                        new RlsPolicy(
                                tenant,
                                security,
                                metrics,
                                c.lateCheckTimeout(),
                                true,
                                c.lateCheckTimeout(),
                                realtimeSchemas::ready,
                                visibility)));
        pipeline.start();
        started.push(pipeline);
    }

    /** The CDC status messages to ws-front. */
    public void startStatus() {
        status = new StatusPublisher(state, publisher, metrics, config.instanceId(), clock);
        status.start(timings.statusTick());
        started.push(status);
    }

    /** The control API on {@code http}, and the enabled-table list it invalidates. */
    public void mountControlApi(HttpApi http) {
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
    }

    /** Each project's own keys: their control API on {@code http} and the answers to ws-front ({@link ProjectKeyServices}). */
    public void startProjectKeys(HttpApi http) {
        ProjectKeyServices.start(config, nats, platform, http, clock, started);
    }

    /** The slot reader, run by leadership while this process leads. */
    public void startLeadership() {
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
                ? new SlotStreamer(readerSettings, slotManager, pipeline, tables, state, metrics, gaps)
                : new SlotPoller(readerSettings, slotManager, pipeline, tables, state, metrics, gaps);
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
    }

    /** The NATS connection, once connected. */
    public Connection nats() {
        return nats;
    }

    /** The registry watch, once made. */
    public RegistryWatch registry() {
        return registry;
    }

    /** The tenant pool, once open. */
    public TenantDb tenant() {
        return tenant;
    }

    /** The projects' realtime schemas and identities, once their provisioning started. */
    public RealtimeSchemas realtimeSchemas() {
        return realtimeSchemas;
    }

    /** The enabled-table list of the control API, once mounted. */
    public EnabledTablesCache tables() {
        return tables;
    }
}
