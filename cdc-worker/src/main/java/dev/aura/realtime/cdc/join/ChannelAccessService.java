package dev.aura.realtime.cdc.join;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.identity.ClientRoles;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.cdc.tenant.ConnectionShare;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers ws-front's {@link ChannelAccess} requests on {@link Subjects#CHANNEL_ACCESS} (queue
 * group {@code aura-cdc-worker}: any replica answers): the project's {@code private_only} setting,
 * and on the tenant pool ({@link ChannelChecks}) the read and write checks of private channels,
 * replay and persisted broadcasts (docs/design.md H1, H2).
 *
 * <p>Every failure denies: an unknown project, a role other than anon/authenticated/service_role,
 * a policy that raises or times out, an unprovisioned realtime schema, tenant SQL switched off, a
 * database that does not answer. {@code service_role} reads and writes every topic without a query
 * (it bypasses row level security in Supabase); its replay and persisted messages run as
 * {@code aura_authenticated} with its claims, so they need a policy that admits it.
 *
 * <p>Threads: each request runs on a virtual thread; one project has at most
 * {@link #MAX_IN_FLIGHT_PER_PROJECT} requests in flight on this replica, and all projects together
 * at most {@link #MAX_IN_FLIGHT_BYTES} of request bodies (the rest are told at once to retry), so
 * one project's flood never queues in front of another's. Requests in flight wait for one of the
 * project's share of the tenant connections ({@link ChannelChecks}, at most the checkout
 * timeout): a burst of joins queues briefly instead of being refused. (With 16 in flight, the
 * join benchmark's 32 concurrent private joins of one project were refused by the hundred.)
 */
public final class ChannelAccessService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ChannelAccessService.class);
    /** Requests of one project held at once by one replica; more are refused with "try again". */
    static final int MAX_IN_FLIGHT_PER_PROJECT = 256;
    /** Request bytes (persisted payloads) held at once by one replica; more are refused with "try again". */
    static final int MAX_IN_FLIGHT_BYTES = 64 * 1024 * 1024;
    /** Longest payload a persisted broadcast may carry (the socket's broadcast limit, Supabase's default). */
    static final int MAX_PERSIST_BYTES = 262_144;
    /** Longer ttls are taken as this (the retention caps every ttl); keeps the interval in range. */
    static final long MAX_TTL_MS = 100L * 365 * 24 * 3600 * 1000;

    static final String TRY_AGAIN = "DatabaseUnavailable: could not check this channel now, try again";
    /** A persist while the database does not guard the confinement (docs/security.md): refused, never run. */
    static final String PERSIST_UNAVAILABLE = "PersistUnavailable: persisted broadcasts are off on this server:"
            + " its database does not guard the platform's objects (cdc-worker /health tenant_sql.confinement)";

    private final Connection nats;
    private final ProjectCatalog projects;
    private final RealtimeSchemas schemas;
    private final TenantDb tenant;
    private final ChannelChecks checks;
    /** Requests carry clients' payloads (persist): every numeric, 4,096 levels (docs/design.md C13). */
    private final ObjectMapper mapper = WireJson.dataMapper();

    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private final ConcurrentHashMap<String, AtomicInteger> inFlight = new ConcurrentHashMap<>();
    private final Semaphore inFlightBytes = new Semaphore(MAX_IN_FLIGHT_BYTES);
    private final ReadCheckBatches reads;
    private Dispatcher dispatcher;

    /** @param readWorkers read-check batches at once (the channel share's connections, {@link ChannelChecks}) */
    public ChannelAccessService(
            Connection nats, ProjectCatalog projects, RealtimeSchemas schemas, TenantDb tenant, int readWorkers) {
        this.nats = nats;
        this.projects = projects;
        this.schemas = schemas;
        this.tenant = tenant;
        this.checks = new ChannelChecks(tenant);
        this.reads = new ReadCheckBatches(projects, schemas, tenant, checks, readWorkers, this::reply);
    }

    public void start() {
        dispatcher = nats.createDispatcher();
        dispatcher.subscribe(
                Subjects.CHANNEL_ACCESS, SubscriptionCheckService.QUEUE, msg -> workers.execute(() -> answer(msg)));
    }

    private void answer(Message msg) {
        int bytes = msg.getData().length;
        if (queuedRead(msg)) {
            return;
        }
        if (!inFlightBytes.tryAcquire(bytes)) {
            reply(msg, ChannelAccess.Reply.failed(TRY_AGAIN));
            return;
        }
        try {
            reply(msg, answer(msg.getData()));
        } finally {
            inFlightBytes.release(bytes);
        }
    }

    private ChannelAccess.Reply answer(byte[] data) {
        ChannelAccess.Reply reply;
        ChannelAccess.Request req = null;
        AtomicInteger counter = null;
        try {
            req = mapper.readValue(data, ChannelAccess.Request.class);
            counter = inFlight.computeIfAbsent(String.valueOf(req.projectId()), k -> new AtomicInteger());
            if (counter.incrementAndGet() > MAX_IN_FLIGHT_PER_PROJECT) {
                reply = ChannelAccess.Reply.failed(TRY_AGAIN);
            } else {
                reply = handle(req);
            }
        } catch (IOException e) {
            reply = ChannelAccess.Reply.failed("MalformedMessage: channel access request is not valid JSON");
        } catch (SQLException | TenantDb.Unavailable e) {
            log.warn("[ChannelAccessDbFailed] {} of project {}: {}", op(req), project(req), e.getMessage());
            reply = ChannelAccess.Reply.failed(TRY_AGAIN);
        } catch (ConnectionShare.Busy e) {
            reply = ChannelAccess.Reply.failed(TRY_AGAIN);
        } catch (RuntimeException e) {
            // e.g. tenant SQL switched off between the status check and the statement
            log.warn("[ChannelAccessDbFailed] {} of project {}: {}", op(req), project(req), e.toString());
            reply = ChannelAccess.Reply.failed(TRY_AGAIN);
        } finally {
            if (counter != null) {
                counter.decrementAndGet();
            }
        }
        return reply;
    }

    /**
     * A read check of a client role (not {@code service_role}, answered without a query) goes to
     * its project's batches ({@link ReadCheckBatches}); true when it was queued or refused there.
     */
    private boolean queuedRead(Message msg) {
        ChannelAccess.Request req;
        UUID project;
        try {
            req = mapper.readValue(msg.getData(), ChannelAccess.Request.class);
            project = UUID.fromString(String.valueOf(req.projectId()));
        } catch (IOException | RuntimeException e) {
            return false; // answered (refused) by the general path
        }
        String pgRole = ClientRoles.of(req.role());
        if (!ChannelAccess.OP_READ.equals(req.op()) || req.topic() == null || pgRole == null) {
            return false;
        }
        String claims = req.claims() == null ? "{}" : req.claims();
        if (!reads.offer(new ReadCheckBatches.Ask(
                project, pgRole, claims, req.topic(), msg.getData().length, msg.getReplyTo()))) {
            reply(msg.getReplyTo(), ChannelAccess.Reply.failed(TRY_AGAIN));
        }
        return true;
    }

    private void reply(Message msg, ChannelAccess.Reply reply) {
        reply(msg.getReplyTo(), reply);
    }

    private void reply(String replyTo, ChannelAccess.Reply reply) {
        if (replyTo != null) {
            try {
                nats.publish(replyTo, mapper.writeValueAsBytes(reply));
            } catch (Exception e) {
                log.debug("could not reply to a channel access request: {}", e.toString());
            }
        }
    }

    private static String op(ChannelAccess.Request req) {
        return req == null ? "?" : req.op();
    }

    private static String project(ChannelAccess.Request req) {
        return req == null ? "?" : req.projectId();
    }

    ChannelAccess.Reply handle(ChannelAccess.Request req)
            throws SQLException, TenantDb.Unavailable, ConnectionShare.Busy, IOException {
        UUID project;
        try {
            project = UUID.fromString(String.valueOf(req.projectId()));
        } catch (RuntimeException e) {
            return ChannelAccess.Reply.failed("Unauthorized: unknown project " + req.projectId());
        }
        Optional<ProjectCatalog.ChannelSettings> found = projects.channelSettings(project);
        if (found.isEmpty()) {
            return ChannelAccess.Reply.failed(
                    "RealtimeDisabledForConfiguration: project " + project + " is not registered for realtime");
        }
        ProjectCatalog.ChannelSettings settings = found.get();
        boolean privateOnly = settings.privateOnly();
        if (ChannelAccess.OP_SETTINGS.equals(req.op())) {
            return ChannelAccess.Reply.settings(privateOnly);
        }
        String topic = req.topic();
        if (topic == null) {
            return ChannelAccess.Reply.failed("MalformedMessage: channel access request without a topic");
        }
        boolean service = ClientRoles.SERVICE_ROLE.equals(req.role());
        String pgRole = service ? ClientRoles.AUTHENTICATED : ClientRoles.of(req.role());
        if (pgRole == null) {
            return ChannelAccess.Reply.failed("Unauthorized: role '" + req.role()
                    + "' cannot use private channels (anon, authenticated or service_role)");
        }
        if (!schemas.ready(project)) {
            return ChannelAccess.Reply.failed(TRY_AGAIN);
        }
        if (tenant.status().off() && !(service && isCheck(req.op()))) {
            return ChannelAccess.Reply.failed(TRY_AGAIN);
        }
        String claims = req.claims() == null ? "{}" : req.claims();
        String rt = RealtimeSchemas.nameOf(project.toString());
        ChannelChecks.Channel channel =
                new ChannelChecks.Channel(ProjectIdentity.of(project), pgRole, claims, settings.schema(), rt, topic);
        return switch (String.valueOf(req.op())) {
            case ChannelAccess.OP_READ -> {
                if (service) {
                    yield ChannelAccess.Reply.read(privateOnly, true, true);
                }
                ChannelChecks.ReadVerdict v = checks.read(channel);
                if (v.failure() != null) {
                    logDenied("read check", project, topic, v.failure());
                }
                yield ChannelAccess.Reply.read(privateOnly, v.broadcast(), v.presence());
            }
            case ChannelAccess.OP_WRITE -> {
                String extension = req.extension();
                if (!"broadcast".equals(extension) && !"presence".equals(extension)) {
                    yield ChannelAccess.Reply.failed("MalformedMessage: extension must be broadcast or presence");
                }
                boolean allowed = service;
                if (!service) {
                    ChannelChecks.WriteVerdict v = checks.write(channel, extension);
                    allowed = v.allowed();
                }
                yield ChannelAccess.Reply.write(privateOnly, allowed);
            }
            case ChannelAccess.OP_PERSIST, ChannelAccess.OP_PERSIST_BINARY -> persist(req, channel, privateOnly);
            case ChannelAccess.OP_REPLAY -> replay(req, channel, privateOnly);
            default -> ChannelAccess.Reply.failed("MalformedMessage: unknown channel access op " + req.op());
        };
    }

    private static boolean isCheck(String op) {
        return ChannelAccess.OP_READ.equals(op) || ChannelAccess.OP_WRITE.equals(op);
    }

    private ChannelAccess.Reply persist(ChannelAccess.Request req, ChannelChecks.Channel channel, boolean privateOnly)
            throws TenantDb.Unavailable, ConnectionShare.Busy, IOException {
        if (!schemas.confinement().status().guarded()) {
            // a deferred trigger at its COMMIT could edit the project's runners unseen
            return ChannelAccess.Reply.notPersisted(privateOnly, PERSIST_UNAVAILABLE);
        }
        boolean isBinary = ChannelAccess.OP_PERSIST_BINARY.equals(req.op());
        byte[] binary = isBinary ? req.binaryPayload() : null;
        if (isBinary && binary == null) {
            return ChannelAccess.Reply.failed("MalformedMessage: persist_binary needs binary_payload");
        }
        JsonNode payload = req.payload() == null ? mapper.createObjectNode() : req.payload();
        String json = binary == null ? mapper.writeValueAsString(payload) : null;
        int size = binary == null ? json.getBytes(StandardCharsets.UTF_8).length : binary.length;
        if (size > MAX_PERSIST_BYTES) {
            return ChannelAccess.Reply.failed(
                    "PayloadTooLarge: Payload size exceeds the limit of " + MAX_PERSIST_BYTES + " bytes");
        }
        String event = req.event() == null ? "" : req.event();
        if (req.ttlMs() < 0) {
            return ChannelAccess.Reply.failed("MalformedMessage: persist.ttl must be a positive number of seconds");
        }
        ChannelChecks.WriteVerdict v = checks.persist(channel, event, json, binary, Math.min(req.ttlMs(), MAX_TTL_MS));
        if (!v.allowed()) {
            if (v.failure() != null && v.failure().kind() == TenantDb.Kind.TIMEOUT) {
                logDenied("persisted broadcast", UUID.fromString(req.projectId()), req.topic(), v.failure());
            }
            return ChannelAccess.Reply.notPersisted(
                    privateOnly,
                    "Unauthorized: You do not have permissions to write to this Channel topic: " + req.topic());
        }
        return ChannelAccess.Reply.persisted(privateOnly, v.id());
    }

    private ChannelAccess.Reply replay(ChannelAccess.Request req, ChannelChecks.Channel channel, boolean privateOnly)
            throws TenantDb.Unavailable, ConnectionShare.Busy, IOException {
        int limit = Math.min(Math.max(1, req.limit()), ChannelAccess.MAX_REPLAY_LIMIT);
        List<ChannelChecks.StoredMessage> stored = checks.replay(channel, req.sinceMs(), limit);
        if (stored == null) {
            return ChannelAccess.Reply.failed("UnableToReplayMessages: the messages could not be read, try again");
        }
        // the newest fit: walk from the newest back and keep what the reply can carry
        List<ChannelAccess.Message> kept = new ArrayList<>();
        int bytes = 0;
        boolean truncated = false;
        for (int i = stored.size() - 1; i >= 0; i--) {
            ChannelChecks.StoredMessage m = stored.get(i);
            bytes += (m.binaryPayload() == null
                            ? m.payload().getBytes(StandardCharsets.UTF_8).length
                            // base64 on the wire
                            : (m.binaryPayload().length + 2) / 3 * 4)
                    + m.event().getBytes(StandardCharsets.UTF_8).length
                    + 96;
            if (bytes > ChannelAccess.MAX_REPLAY_BYTES) {
                truncated = true;
                break;
            }
            kept.add(
                    0,
                    m.binaryPayload() == null
                            ? new ChannelAccess.Message(
                                    m.id(), m.event(), mapper.readTree(m.payload()), m.insertedAtMs())
                            : new ChannelAccess.Message(m.id(), m.event(), null, m.insertedAtMs(), m.binaryPayload()));
        }
        return ChannelAccess.Reply.replayed(privateOnly, kept, truncated);
    }

    static void logDenied(String what, UUID project, String topic, TenantDb.Failure f) {
        String text = f.tenantText() == null ? "" : f.tenantText().replaceAll("\\p{Cntrl}", " ");
        log.info(
                "{} of project {} topic {} denied: {} {} {}",
                what,
                project,
                topic.length() > 80 ? topic.substring(0, 80) + "..." : topic,
                f.kind(),
                f.sqlState(),
                text.length() > 200 ? text.substring(0, 200) : text);
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            nats.closeDispatcher(dispatcher);
        }
        reads.close();
        workers.shutdownNow();
    }
}
