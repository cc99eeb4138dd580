package dev.aura.realtime.front;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.ResumeRecord;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.auth.Credentials;
import dev.aura.realtime.front.auth.RevokedKeys;
import dev.aura.realtime.front.broadcast.Broadcasts;
import dev.aura.realtime.front.broadcast.PrivateChannels;
import dev.aura.realtime.front.broadcast.RestBroadcasts;
import dev.aura.realtime.front.channel.ChannelLayer;
import dev.aura.realtime.front.config.FrontConfig;
import dev.aura.realtime.front.fanout.CdcHealth;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.fanout.LocalTopics;
import dev.aura.realtime.front.fanout.QueueLimits;
import dev.aura.realtime.front.history.HistoryStore;
import dev.aura.realtime.front.inspect.ProjectInspector;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.postgres.PostgresChanges;
import dev.aura.realtime.front.presence.PresenceService;
import dev.aura.realtime.front.protocol.BinaryFrames;
import dev.aura.realtime.front.protocol.FanoutFrames;
import dev.aura.realtime.front.protocol.JsonFrames;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.quota.ProjectQuota;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.relay.BucketLedger;
import dev.aura.realtime.front.relay.KvSubscriptionRegistry;
import dev.aura.realtime.front.relay.NatsConnection;
import dev.aura.realtime.front.relay.NatsHeldChanges;
import dev.aura.realtime.front.relay.NatsProjectKeys;
import dev.aura.realtime.front.relay.NatsProjectLimits;
import dev.aura.realtime.front.relay.NatsRelay;
import dev.aura.realtime.front.relay.NatsUsageExchange;
import dev.aura.realtime.front.resume.HeldBytes;
import dev.aura.realtime.front.resume.HistoryReader;
import dev.aura.realtime.front.resume.ResumeLiveness;
import dev.aura.realtime.front.resume.ResumeServices;
import dev.aura.realtime.front.resume.ResumeStore;
import dev.aura.realtime.front.resume.Resumes;
import dev.aura.realtime.front.session.ClientSession;
import dev.aura.realtime.front.session.Limits;
import dev.aura.realtime.front.session.Sessions;
import dev.aura.realtime.front.transport.FrontServer;
import dev.aura.realtime.front.transport.TransportContext;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.netty.buffer.ByteBufAllocator;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One running ws-front: NATS connection, subscription registry, presence, relay, fan-out and
 * CDC health, and the HTTP/WebSocket/SSE server, started in that order and closed in reverse
 * (one deque of what was started, as in cdc-worker's CdcWorker).
 * Also used by tests to run several replicas in one JVM.
 *
 * <p>{@link #close()} is the graceful shutdown: stop accepting, send every channel
 * {@code system} "Server requested disconnect" and {@code phx_close}, close sockets, wait up to
 * {@code WS_SHUTDOWN_GRACE_SECONDS} for them, then delete remaining registry and presence entries
 * and stop.
 */
public final class FrontApp implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FrontApp.class);
    /** How long a resume record's owner may take to say its channel is live (else it counts as gone). */
    private static final java.time.Duration RESUME_LIVE_TIMEOUT = java.time.Duration.ofSeconds(1);
    /** How long the inspector reuses a project's quarantine and late-lane sizes read from JetStream. */
    private static final java.time.Duration HELD_CHANGES_MAX_AGE = java.time.Duration.ofSeconds(2);

    private final FrontConfig config;
    private final NatsConnection nats;
    private final Sessions sessions;
    private final FrontServer server;
    /** What start() started, last on top: close() and a failed start close it in reverse. */
    private final Deque<AutoCloseable> started;

    private final AtomicBoolean closed = new AtomicBoolean();

    private FrontApp(
            FrontConfig config,
            NatsConnection nats,
            Sessions sessions,
            FrontServer server,
            Deque<AutoCloseable> started) {
        this.config = config;
        this.nats = nats;
        this.sessions = sessions;
        this.server = server;
        this.started = started;
    }

    /** Starts every component; on failure closes what was started and rethrows. */
    public static FrontApp start(FrontConfig config) throws Exception {
        Clock clock = Clock.systemUTC();
        // change events and captured messages carry Postgres values: every numeric, 4,096 levels (C13)
        ObjectMapper mapper = WireJson.dataMapper();
        PrometheusMeterRegistry meters = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        FrontMetrics metrics = new FrontMetrics(meters);
        JwtVerifier verifier = new JwtVerifier(config.jwt(), clock);
        Deque<AutoCloseable> started = new ArrayDeque<>();
        started.push(meters::close);
        try {
            NatsConnection nats = NatsConnection.connect(config.nats(), "ws-front " + config.instanceId());
            started.push(nats);
            // each project's bytes in the two KV buckets, counted here and shared in the usage report (D8)
            // the registry's max age follows the longest resume window (docs/design.md R): read by the registry
            AtomicReference<KvSubscriptionRegistry> registryRef = new AtomicReference<>();
            Supplier<Duration> registryMaxAge = () -> {
                KvSubscriptionRegistry r = registryRef.get();
                return r == null ? SubscriptionEntry.MAX_AGE : r.maxAge();
            };
            BucketLedger registryBytes = new BucketLedger(SubscriptionEntry.BUCKET, registryMaxAge, clock);
            BucketLedger presenceBytes =
                    new BucketLedger(PresenceService.BUCKET, config.presence().maxAge(), clock);
            NatsUsageExchange usage = new NatsUsageExchange(
                    nats.connection(),
                    config.instanceId(),
                    mapper,
                    clock,
                    config.projectLimits().usageInterval());
            started.push(usage);
            NatsProjectLimits projectLimits = new NatsProjectLimits(
                    nats.connection(),
                    mapper,
                    clock,
                    config.projectLimits().limitsRefresh(),
                    config.subscriptionCheckTimeout());
            BucketLedger resumeBytes = new BucketLedger(
                    ResumeRecord.BUCKET, () -> registryMaxAge.get().plus(ResumeStore.MARGIN), clock);
            ProjectQuotas quotas = new ProjectQuotas(
                    ProjectQuota.defaults(config),
                    projectLimits,
                    usage,
                    clock,
                    registryBytes,
                    presenceBytes,
                    resumeBytes);
            KvSubscriptionRegistry registry = new KvSubscriptionRegistry(
                    nats.connection(),
                    KvBuckets.registry(config.registryBucketMaxBytes()),
                    config.subscriptionRefresh(),
                    mapper,
                    registryBytes,
                    quotas.registryShares(),
                    clock);
            registryRef.set(registry);
            started.push(registry);
            registry.start();
            PresenceService presence = new PresenceService(
                    nats.connection(),
                    config.presence(),
                    config.instanceId(),
                    clock,
                    mapper,
                    presenceBytes,
                    quotas.presenceShares());
            started.push(presence);
            presence.start();
            nats.onReconnect(presence::onReconnect);
            NatsRelay relay = new NatsRelay(
                    nats.connection(),
                    config.instanceId(),
                    config.subscriptionCheckTimeout(),
                    mapper,
                    metrics,
                    config.dedupeWindowEvents(),
                    config.dedupeWindowBytes());
            started.push(relay);
            JsonFrames json = new JsonFrames(mapper, config.maxBindingsPerJoin());
            BinaryFrames binary = new BinaryFrames(json);
            LocalTopics topics = new LocalTopics();
            HistoryStore history = new HistoryStore(
                    config.historySize(),
                    config.historyMaxChannels(),
                    config.historyMaxBytes(),
                    config.historyTtl().toMillis(),
                    config.historyMaxChannelsPerProject(),
                    config.historyMaxBytesPerProject());
            CdcHealth cdc = new CdcHealth(topics, metrics, clock);
            Fanout fanout = new Fanout(
                    topics,
                    new FanoutFrames(json, binary),
                    ByteBufAllocator.DEFAULT,
                    metrics,
                    clock,
                    history,
                    new QueueLimits(config.maxQueueDelay(), config.maxQueueBytes()),
                    System::nanoTime,
                    cdc);
            Sessions sessions = new Sessions();
            usage.start(quotas::usage);
            // postgres_changes resume (docs/design.md R): records, history reads
            ResumeStore resumeStore = new ResumeStore(
                    nats.connection(),
                    mapper,
                    config.resumeBucketMaxBytes(),
                    resumeBytes,
                    quotas.resumeShares(),
                    registryMaxAge,
                    clock);
            started.push(resumeStore);
            resumeStore.start();
            // what resume's replays hold at once, bounded well under the heap (issue 38, docs/design.md R):
            // the chunks being read and written 1/32 of it, the live changes held meanwhile 1/16
            long heap = Runtime.getRuntime().maxMemory();
            HistoryReader historyReader =
                    new HistoryReader(nats.connection(), mapper, clamp(heap / 32, 4L << 20, 256L << 20));
            started.push(historyReader);
            ResumeLiveness liveness =
                    new ResumeLiveness(nats.connection(), config.instanceId(), topics::holds, RESUME_LIVE_TIMEOUT);
            started.push(liveness);
            liveness.start();
            ResumeServices resumes = new ResumeServices(
                    resumeStore,
                    historyReader,
                    projectLimits,
                    config.maxOutboundBytes(),
                    liveness,
                    registryMaxAge,
                    new HeldBytes(clamp(heap / 16, 8L << 20, 512L << 20)));
            // every credential, the platform's and each project's own keys (docs/security.md)
            Credentials credentials = new Credentials(
                    verifier,
                    new NatsProjectKeys(nats.connection(), mapper, config.projectKeysTimeout()),
                    clock,
                    config.projectKeysCache(),
                    config.jwt().jwksMinRefresh());
            PrivateChannels privateChannels = new PrivateChannels(relay, fanout, mapper, clock);
            ChannelLayer channels = new ChannelLayer(
                    credentials,
                    quotas,
                    Limits.from(config),
                    sessions,
                    topics,
                    fanout,
                    presence,
                    new PostgresChanges(
                            relay,
                            registry,
                            cdc,
                            mapper,
                            config.instanceId(),
                            clock,
                            config.replicationReadyTimeout().toMillis()),
                    privateChannels,
                    new Broadcasts(privateChannels, quotas, fanout, relay, clock),
                    new Resumes(resumes, topics, cdc, fanout, metrics, config.instanceId(), clock),
                    metrics,
                    mapper,
                    clock);
            relay.start(fanout);
            // A dropped link is told to postgres_changes subscribers at once; "ok" follows once the
            // link is back, the registry re-put, and an active cdc-worker heard again (CdcHealth).
            nats.onDisconnect(cdc::relayLinkLost);
            nats.onReconnect(() -> registry.reputAll().thenRun(cdc::relayLinkRestored));
            started.push(cdc);
            cdc.watch(config.cdcStatusTimeout());
            // the inspector's view of a project's quarantine and late lane (docs/design.md D9)
            NatsHeldChanges heldChanges = new NatsHeldChanges(nats.connection(), clock, HELD_CHANGES_MAX_AGE);
            started.push(heldChanges);
            TransportContext transport = new TransportContext(
                    channels,
                    credentials,
                    quotas,
                    sessions,
                    metrics,
                    json,
                    binary,
                    config.maxFrameBytes(),
                    config.idleTimeout(),
                    config.slowClientTimeout(),
                    nats::isConnected,
                    meters::scrape,
                    config.sseHeartbeat(),
                    new RestBroadcasts(privateChannels, quotas, fanout, relay, mapper, clock),
                    config.connectionBounds(),
                    new ProjectInspector(quotas, cdc, heldChanges, config.instanceId()));
            FrontServer server = new FrontServer(
                    transport,
                    config.wsPort(),
                    config.ioThreads(),
                    config.writeBufferLowBytes(),
                    config.writeBufferHighBytes());
            started.push(server);
            RevokedKeys revoked = new RevokedKeys(credentials, sessions, config.projectKeysCache());
            started.push(revoked);
            revoked.start();
            log.info("ws-front {} started on port {}", config.instanceId(), server.port());
            return new FrontApp(config, nats, sessions, server, started);
        } catch (Exception | Error e) {
            closeAll(started);
            throw e;
        }
    }

    public int port() {
        return server.port();
    }

    public String instanceId() {
        return config.instanceId();
    }

    /** The NATS connection; tests close it to simulate a crash (nothing deleted, nothing refreshed). */
    NatsConnection nats() {
        return nats;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        log.info("shutting down: {} connections", sessions.size());
        server.stopAccepting();
        for (ClientSession s : sessions.snapshot()) {
            s.disconnect(Reasons.SERVER_DISCONNECT);
        }
        long deadline = System.nanoTime() + config.shutdownGrace().toNanos();
        while (sessions.size() > 0 && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        // the server first: it closes remaining sockets, whose channels delete registry and presence entries
        closeAll(started);
        log.info("ws-front {} stopped", config.instanceId());
    }

    /** Closes what was started, last first; one failure does not stop the rest. */
    private static void closeAll(Deque<AutoCloseable> started) {
        while (!started.isEmpty()) {
            AutoCloseable c = started.pop();
            try {
                c.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                LogCode.StopFailed.warn(log, "error while stopping {}: {}", c, e.toString());
            }
        }
    }

    private static long clamp(long v, long min, long max) {
        return Math.max(min, Math.min(max, v));
    }
}
