package dev.aura.realtime.cdc;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.aura.realtime.cdc.config.CdcConfig;
import dev.aura.realtime.cdc.control.ControlApi;
import dev.aura.realtime.cdc.decode.TypeCatalog;
import dev.aura.realtime.cdc.http.HttpApi;
import dev.aura.realtime.cdc.leader.LeaderElection;
import dev.aura.realtime.cdc.leader.LeadershipStatus;
import dev.aura.realtime.cdc.match.SubscriptionIndex;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.pipeline.EventBuilder;
import dev.aura.realtime.cdc.pipeline.ShardedPipeline;
import dev.aura.realtime.cdc.platform.EnabledTablesCache;
import dev.aura.realtime.cdc.platform.PlatformSchema;
import dev.aura.realtime.cdc.publish.EventPublisher;
import dev.aura.realtime.cdc.publish.StatusPublisher;
import dev.aura.realtime.cdc.rls.RlsPolicy;
import dev.aura.realtime.cdc.rls.TableSecurity;
import dev.aura.realtime.cdc.rpc.SubscriptionCheckService;
import dev.aura.realtime.cdc.slot.CdcReason;
import dev.aura.realtime.cdc.slot.CdcState;
import dev.aura.realtime.cdc.slot.SlotManager;
import dev.aura.realtime.cdc.slot.SlotPoller;
import dev.aura.realtime.common.auth.JwtVerifier;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cdc-worker process as one object: wires every component, starts them in order and closes
 * them in reverse. {@code CdcWorkerMain} runs one; tests run several in one JVM.
 *
 * <p>Start order: metrics, HTTP (so {@code /health} answers at once), NATS (reconnecting
 * forever, also on the first connect), the Postgres pool, then on thread {@code aura-bootstrap}
 * (retrying until Postgres answers) the platform schema, the registry watch, the subscription
 * check responder, the RLS shards, the status publisher and finally leadership, which runs the
 * poll loop while this process leads.
 */
public final class CdcWorker implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(CdcWorker.class);

    private final CdcConfig config;
    private final Clock clock;
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final CdcState state;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final CdcMetrics metrics = new CdcMetrics(registry);
    private volatile boolean bootstrapped;
    private volatile Connection nats;
    private HttpApi http;
    private Thread bootstrap;
    private volatile LeaderElection election;
    private volatile EnabledTablesCache tables;

    public CdcWorker(CdcConfig config, Clock clock) {
        this.config = config;
        this.clock = clock;
        this.state = new CdcState(
                clock, Duration.ofSeconds(10).plus(config.idleBackoff().multipliedBy(2)));
    }

    /** Starts the worker; returns once the HTTP port listens (the rest comes up in the background). */
    public synchronized void start() throws Exception {
        http = new HttpApi(
                config.httpPort(),
                state,
                this::leaderView,
                this::ready,
                registry,
                config.instanceId(),
                config.slotName());
        http.start();
        started.push(http);

        Options options = new Options.Builder()
                .server(config.natsUrl())
                .connectionName("aura-cdc-worker " + config.instanceId())
                .maxReconnects(-1)
                .reconnectWait(Duration.ofMillis(500))
                .connectionTimeout(Duration.ofSeconds(5))
                .connectionListener((conn, event) -> {
                    log.info("nats: {}", event);
                    SubscriptionIndex idx = index;
                    if (idx != null) {
                        idx.onConnectionEvent(event);
                    }
                })
                .build();
        nats = Nats.connectReconnectOnConnect(options);
        started.push(() -> nats.close());

        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(config.postgresUrl());
        hc.setPoolName("aura-cdc-db");
        hc.setMaximumPoolSize(config.numShards() + 4);
        hc.setInitializationFailTimeout(-1);
        hc.setConnectionTimeout(5000);
        hc.addDataSourceProperty("ApplicationName", "aura-cdc-worker-pool");
        HikariDataSource pool = new HikariDataSource(hc);
        started.push(pool);

        bootstrap = Thread.ofPlatform().name("aura-bootstrap").daemon().start(() -> bootstrap(pool));
    }

    private volatile SubscriptionIndex index;

    private void bootstrap(HikariDataSource pool) {
        long backoff = 200;
        while (!closed.get()) {
            try {
                PlatformSchema.ensure(pool);
                break;
            } catch (Exception e) {
                state.failed(CdcReason.POSTGRES_UNAVAILABLE, "bootstrap: " + e.getMessage());
                log.warn("platform bootstrap failed, retrying in {} ms: {}", backoff, e.getMessage());
                try {
                    Thread.sleep(backoff);
                } catch (InterruptedException ie) {
                    return;
                }
                backoff = Math.min(backoff * 2, 5000);
            }
        }
        try {
            synchronized (this) {
                if (closed.get()) {
                    return;
                }
                TypeCatalog types = new TypeCatalog(pool);
                SubscriptionIndex idx = new SubscriptionIndex(nats, clock);
                index = idx;
                started.push(idx);
                if (!startRegistry(idx)) {
                    return;
                }

                SubscriptionCheckService checks = new SubscriptionCheckService(nats, pool);
                checks.start();
                started.push(checks);

                EventPublisher publisher = new EventPublisher(nats, config.instanceId());
                started.push(publisher);
                ShardedPipeline pipeline = new ShardedPipeline(
                        config.numShards(),
                        1024,
                        new EventBuilder(types, config.maxRecordBytes()),
                        idx,
                        new RlsPolicy(
                                pool,
                                new TableSecurity(pool, clock, Duration.ofSeconds(2)),
                                metrics,
                                config.naiveRls()),
                        publisher,
                        metrics,
                        Duration.ofSeconds(5));
                pipeline.start();
                started.push(pipeline);

                StatusPublisher status =
                        new StatusPublisher(state, publisher, metrics, config.instanceId(), clock, 5000);
                status.start(250);
                started.push(status);

                tables = new EnabledTablesCache(pool, config.tableRefresh(), clock);
                EnabledTablesCache cache = tables;
                http.mount("/v1/", new ControlApi(pool, new JwtVerifier(config.jwtSecret(), clock), cache::invalidate));
                SlotPoller poller = new SlotPoller(
                        new SlotPoller.Settings(
                                config.replicationUrl(),
                                config.batchSize(),
                                config.fetchSize(),
                                config.idleBackoff(),
                                Duration.ofSeconds(5),
                                config.redecodeWarnBytes()),
                        new SlotManager(config.slotName()),
                        pipeline,
                        tables,
                        state,
                        metrics,
                        (from, to) -> status.publishNow());
                LeaderElection elect = LeaderElection.fromConfig(
                        config.leader(),
                        gate -> {
                            pipeline.useGate(gate);
                            state.leading(true);
                            try {
                                poller.run(gate);
                            } finally {
                                state.leading(false);
                            }
                        },
                        registry);
                election = elect;
                elect.start();
                started.push(elect);
                status.syncWith(this::syncLeadership);
                bootstrapped = true;
                log.info(
                        "cdc-worker {} started (slot {}, {} shards)",
                        config.instanceId(),
                        config.slotName(),
                        config.numShards());
            }
        } catch (Exception e) {
            log.error("cdc-worker start-up failed", e);
            state.failed(CdcReason.ERROR, "start-up failed: " + e);
        }
    }

    /**
     * Starts the registry watch, retrying with backoff while NATS is unreachable (a worker started
     * before NATS must come up on its own).
     *
     * @return false when the worker was closed meanwhile
     */
    private boolean startRegistry(SubscriptionIndex idx) throws InterruptedException {
        long backoff = 500;
        while (!closed.get()) {
            try {
                idx.start(60_000);
                return true;
            } catch (java.io.IOException | io.nats.client.JetStreamApiException e) {
                state.failed(CdcReason.NATS_UNAVAILABLE, "subscription registry: " + e.getMessage());
                log.warn(
                        "subscription registry watch failed (NATS unreachable?), retrying in {} ms: {}",
                        backoff,
                        e.getMessage());
                Thread.sleep(backoff);
                backoff = Math.min(backoff * 2, 5000);
            }
        }
        return false;
    }

    private HttpApi.LeaderView leaderView() {
        LeaderElection e = election;
        if (e == null) {
            return new HttpApi.LeaderView(false, null, 0, config.leader().mode().configValue());
        }
        LeadershipStatus s = e.status();
        return new HttpApi.LeaderView(s.leader(), s.holder(), s.leaseEpoch(), s.mode());
    }

    /** Mirrors why this process does not lead into the CDC state (for /health and clients). */
    private void syncLeadership() {
        LeaderElection e = election;
        if (e == null) {
            return;
        }
        LeadershipStatus s = e.status();
        if (s.leader() || state.snapshot().leader()) {
            return; // the work itself reports leading/stopped
        }
        if (s.reason() != null && !s.reason().startsWith("standby")) {
            state.notLeading(CdcReason.LEASE_UNAVAILABLE, s.reason());
        } else {
            state.leading(false);
        }
    }

    private boolean ready() {
        Connection n = nats;
        return bootstrapped && n != null && n.getStatus() == Connection.Status.CONNECTED;
    }

    /** Entries in this worker's view of the subscription registry (0 before start-up completes). */
    public int registrySize() {
        SubscriptionIndex idx = index;
        return idx == null ? 0 : idx.size();
    }

    public CdcState state() {
        return state;
    }

    public int httpPort() {
        return http.port();
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        synchronized (this) {
            if (bootstrap != null) {
                bootstrap.interrupt();
            }
            while (!started.isEmpty()) {
                AutoCloseable c = started.pop();
                try {
                    c.close();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Exception e) {
                    log.warn("error while stopping {}: {}", c, e.toString());
                }
            }
        }
        log.info("cdc-worker {} stopped", config.instanceId());
    }
}
