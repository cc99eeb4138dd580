package dev.aura.realtime.front.broadcast;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.fanout.ChannelKeys;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.history.MessageIds;
import dev.aura.realtime.front.protocol.Persist;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.relay.BroadcastPublisher;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * REST broadcast (docs/design.md H3), the channel side of {@code POST /realtime/v1/api/broadcast}
 * and {@code POST /realtime/v1/api/broadcast/<topic>/events/<event>}: the same limits, checks and
 * relay as a socket broadcast. A public message needs a project without {@code private_only}; a
 * private one the topic's write policy (one check per distinct topic of the request); a persisted
 * one is stored under the caller's role and delivered from the database. All messages of a request
 * are checked before any is sent, so a refused request sends nothing. Thread-safe.
 */
public final class RestBroadcasts {
    /** Messages one request may carry. */
    public static final int MAX_MESSAGES = 100;

    /** One message of a request; {@code payload} is JSON text when {@code json}, else raw bytes. */
    public record Message(String topic, String event, byte[] payload, boolean json, boolean privateChannel) {}

    /**
     * The HTTP status of a refused persist: 413 for a payload over a limit, 503 while the worker
     * cannot store messages safely ({@code PersistUnavailable}: the database confinement guard is
     * missing, docs/security.md), else 403 (the project's write policy).
     */
    static int status(String error) {
        if (error.startsWith("PayloadTooLarge")) {
            return 413;
        }
        return error.startsWith("PersistUnavailable") ? 503 : 403;
    }

    /** The HTTP answer: 202, or a status with a JSON {@code error}. */
    public record Result(int status, String error) {
        static final Result ACCEPTED = new Result(202, null);
    }

    private final PrivateChannels privateChannels;
    private final ProjectQuotas quotas;
    private final Fanout fanout;
    private final BroadcastPublisher publisher;
    private final ObjectMapper mapper;
    private final Clock clock;

    /**
     * @param privateChannels asks the write checks, the project's {@code private_only} and stores persisted messages
     * @param quotas the project's payload limit and message rate
     * @param fanout delivers to this replica's members
     * @param publisher sends to the other replicas
     * @param mapper reads persisted JSON payloads
     */
    public RestBroadcasts(
            PrivateChannels privateChannels,
            ProjectQuotas quotas,
            Fanout fanout,
            BroadcastPublisher publisher,
            ObjectMapper mapper,
            Clock clock) {
        this.privateChannels = privateChannels;
        this.quotas = quotas;
        this.fanout = fanout;
        this.publisher = publisher;
        this.mapper = mapper;
        this.clock = clock;
    }

    /**
     * Checks and sends a request's messages as {@code claims} (the bearer token's, else the apikey's).
     *
     * @param persist store the (single, private) message ({@code ?persist=true} or
     *     {@code ?persist[ttl]=<seconds>}), or null
     */
    public CompletableFuture<Result> send(Claims claims, List<Message> messages, Persist persist) {
        if (persist != null && persist.invalid() != null) {
            return done(400, persist.invalid());
        }
        if (messages.isEmpty()) {
            return done(400, "messages must be a non-empty array of {topic, event, payload, private}");
        }
        if (messages.size() > MAX_MESSAGES) {
            return done(413, "too many messages in one request: at most " + MAX_MESSAGES);
        }
        int limit = quotas.quota(claims.projectId()).maxPayloadBytes();
        for (Message m : messages) {
            if (m.topic().isEmpty()) {
                return done(400, Reasons.TOPIC_NAME_REQUIRED);
            }
            if (m.topic().indexOf('\u0000') >= 0) {
                return done(400, Reasons.TOPIC_NAME_INVALID);
            }
            if (Topics.nameTooLong(Topics.PREFIX + m.topic())) {
                return done(400, Reasons.TOPIC_TOO_LONG);
            }
            if (m.payload().length > limit) {
                return done(413, Reasons.payloadTooLarge(limit));
            }
            if (m.json() && WireJson.deeperThan(m.payload(), WireJson.MAX_VALUE_NESTING)) {
                return done(413, Reasons.PAYLOAD_TOO_DEEP);
            }
            if (persist != null && !m.privateChannel()) {
                return done(400, "persist needs a private channel");
            }
        }
        // the project's messages and bytes per second, across replicas, as for socket broadcasts
        for (Message m : messages) {
            if (!quotas.tryMessage(claims.projectId(), m.payload().length)) {
                return done(429, Reasons.PROJECT_TOO_MANY_MESSAGES);
            }
        }
        boolean anyPublic = messages.stream().anyMatch(m -> !m.privateChannel());
        CompletableFuture<Boolean> privateOnly =
                anyPublic ? privateChannels.privateOnly(claims.projectId()) : CompletableFuture.completedFuture(false);
        Map<String, CompletableFuture<ChannelAccess.Reply>> checks = new LinkedHashMap<>();
        if (persist == null) {
            for (Message m : messages) {
                if (m.privateChannel()) {
                    checks.computeIfAbsent(
                            m.topic(),
                            t -> privateChannels.ask(ChannelAccess.Request.write(
                                    claims.projectId(), t, claims.role(), claims.json(), "broadcast")));
                }
            }
        }
        List<CompletableFuture<?>> all = new ArrayList<>(checks.values());
        all.add(privateOnly);
        return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenCompose(v -> {
            if (anyPublic && privateOnly.join()) {
                return done(403, Reasons.PRIVATE_ONLY);
            }
            for (Map.Entry<String, CompletableFuture<ChannelAccess.Reply>> c : checks.entrySet()) {
                ChannelAccess.Reply r = c.getValue().join();
                if (ChannelAccessClient.UNAVAILABLE.equals(r.error())) {
                    return done(503, r.error());
                }
                if (r.error() != null || !r.write()) {
                    return done(403, Reasons.cannotWrite(c.getKey()));
                }
            }
            if (persist != null) {
                return persist(claims, messages.get(0), persist);
            }
            for (Message m : messages) {
                String key = ChannelKeys.of(m.topic(), m.privateChannel());
                UserBroadcast b = new UserBroadcast(m.event(), m.payload(), m.json(), MessageIds.next(clock.millis()));
                fanout.broadcastLocal(claims.projectId(), key, b, null);
                publisher.publish(claims.projectId(), key, b);
            }
            return CompletableFuture.completedFuture(Result.ACCEPTED);
        });
    }

    private CompletableFuture<Result> persist(Claims claims, Message m, Persist persist) {
        ChannelAccess.Request request;
        if (m.json()) {
            JsonNode payload;
            try {
                payload = mapper.readTree(m.payload());
            } catch (IOException e) {
                return done(400, "the payload is not JSON");
            }
            request = ChannelAccess.Request.persist(
                    claims.projectId(), m.topic(), claims.role(), claims.json(), m.event(), payload, persist.ttlMs());
        } else {
            // an octet-stream body: stored in binary_payload, delivered as a binary broadcast
            request = ChannelAccess.Request.persistBinary(
                    claims.projectId(),
                    m.topic(),
                    claims.role(),
                    claims.json(),
                    m.event(),
                    m.payload(),
                    persist.ttlMs());
        }
        return privateChannels.ask(request).thenApply(r -> {
            if (r.error() == null) {
                return Result.ACCEPTED;
            }
            if (ChannelAccessClient.UNAVAILABLE.equals(r.error())) {
                return new Result(503, r.error());
            }
            return new Result(status(r.error()), r.error());
        });
    }

    private static CompletableFuture<Result> done(int status, String error) {
        return CompletableFuture.completedFuture(new Result(status, error));
    }
}
