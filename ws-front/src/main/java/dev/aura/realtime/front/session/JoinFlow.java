package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.relay.SubscriptionChecker.Outcome;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code phx_join} of one connection (event loop only).
 *
 * <p>Order of a join with postgres_changes: validate topic, rate and channel limits, token and
 * payload; ask a cdc-worker about every binding (asynchronously; a later join or leave of the
 * same topic supersedes the pending one); on any refusal reply the first refusal's reason; else
 * make the channel live, put the registry entries and, once they are written, reply ok with the
 * bindings echoed in client order and push {@code system} "Subscribed to PostgreSQL" (or the
 * CDC-unavailable error). A second join of a joined topic first closes the old channel with
 * {@code phx_close} carrying the old join ref, as Phoenix does. History is replayed right after
 * the ok reply: {@code config.broadcast.replay}, or the SSE endpoint's {@code Last-Event-ID}.
 *
 * <p>Every join also passes its gate ({@link PrivateChannels#gate}), asked together with the
 * binding checks: a private channel's read check (refused with Supabase's "Unauthorized: You do not
 * have permissions to read from this Channel topic"), or the project's {@code private_only} for a
 * public one. A private channel's replay comes from the project's messages table (docs/design.md H1, H2).
 */
final class JoinFlow {
    private static final Logger log = LoggerFactory.getLogger(JoinFlow.class);
    /** With {@code postgres_changes_options.wait}: how often an unanswered check or an inactive CDC is retried. */
    private static final long RETRY_MS = 250;

    private final ChannelServices services;
    private final ClientSession session;
    private final ChannelLifecycle lifecycle;
    private final PrivateChannels privateChannels;

    JoinFlow(
            ChannelServices services,
            ClientSession session,
            ChannelLifecycle lifecycle,
            PrivateChannels privateChannels) {
        this.services = services;
        this.session = session;
        this.lifecycle = lifecycle;
        this.privateChannels = privateChannels;
    }

    void join(PhoenixMessage.Join j) {
        String topic = j.topic();
        if (!topic.startsWith(Topics.PREFIX)) {
            replyError(j, Reasons.UNMATCHED_TOPIC);
            return;
        }
        if (!Topics.isChannel(topic)) {
            replyError(j, Reasons.TOPIC_NAME_REQUIRED);
            return;
        }
        if (Topics.nameTooLong(topic)) {
            replyError(j, Reasons.TOPIC_TOO_LONG);
            return;
        }
        if (topic.indexOf('\u0000') >= 0) {
            replyError(j, Reasons.TOPIC_NAME_INVALID); // NUL is reserved for private channel keys
            return;
        }
        if (!session.joins.tryAcquire(services.clock().millis())) {
            replyError(j, Reasons.TOO_MANY_JOINS);
            return;
        }
        String projectId = session.apiKeyClaims().projectId();
        if (!services.quotas().tryJoin(projectId)) {
            replyError(j, Reasons.PROJECT_TOO_MANY_JOINS);
            return;
        }
        Membership previous = session.memberships.get(topic);
        if (previous != null) {
            lifecycle.close(previous, true);
        }
        session.pendingJoins.remove(topic);
        if (session.memberships.size() + session.pendingJoins.size()
                >= services.quotas().quota(projectId).maxChannelsPerClient()) {
            replyError(j, Reasons.TOO_MANY_CHANNELS);
            return;
        }
        JoinRequest request;
        try {
            request = JoinRequest.parse(j.payload(), services.limits().maxBindingsPerJoin());
        } catch (JoinRequest.Refused e) {
            replyError(j, e.reason());
            return;
        }
        Claims claims = session.apiKeyClaims();
        if (request.accessToken() != null) {
            try {
                claims = services.verifier().verify(request.accessToken());
            } catch (AuthException e) {
                replyError(j, e.reason());
                return;
            }
            if (!claims.projectId().equals(session.apiKeyClaims().projectId())) {
                replyError(j, Reasons.PROJECT_MISMATCH);
                return;
            }
        }
        boolean privateChannel = request.config().path("private").asBoolean(false);
        Object token = new Object();
        session.pendingJoins.put(topic, token);
        CompletableFuture<PrivateChannels.Gate> gate =
                privateChannels.gate(topic.substring(Topics.PREFIX.length()), privateChannel, claims);
        long deadline = request.waitMs() > 0 && !request.bindings().isEmpty()
                ? System.nanoTime() + request.waitMs() * 1_000_000
                : 0;
        startChecks(j, request, claims, token, gate, privateChannel, deadline);
    }

    /**
     * Asks a cdc-worker to check every binding. @param deadline with {@code postgres_changes_options.wait},
     *     the {@code System.nanoTime()} by which changes must flow, else 0
     */
    private void startChecks(
            PhoenixMessage.Join j,
            JoinRequest request,
            Claims claims,
            Object token,
            CompletableFuture<PrivateChannels.Gate> gate,
            boolean privateChannel,
            long deadline) {
        List<CompletableFuture<Outcome>> checks = new ArrayList<>();
        for (JoinRequest.Binding b : request.bindings()) {
            checks.add(check(new SubscriptionCheck.Request(
                    claims.projectId(), b.table(), b.filter(), b.event(), claims.role(), b.select())));
        }
        List<CompletableFuture<?>> all = new ArrayList<>(checks);
        all.add(gate);
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> onEventLoop(
                        j, () -> afterChecks(j, request, claims, token, gate, privateChannel, checks, deadline)));
    }

    private CompletableFuture<Outcome> check(SubscriptionCheck.Request request) {
        try {
            return services.checker().check(request).exceptionally(e -> new Outcome.Unavailable(String.valueOf(e)));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(new Outcome.Unavailable(e.toString()));
        }
    }

    private void afterChecks(
            PhoenixMessage.Join j,
            JoinRequest request,
            Claims claims,
            Object token,
            CompletableFuture<PrivateChannels.Gate> gate,
            boolean privateChannel,
            List<CompletableFuture<Outcome>> checks,
            long deadline) {
        if (session.pendingJoins.get(j.topic()) != token) {
            return; // superseded by a later join or a leave
        }
        if (!session.channel().isActive()) {
            session.pendingJoins.remove(j.topic());
            return;
        }
        if (deadline != 0 && checks.stream().anyMatch(c -> c.join() instanceof Outcome.Unavailable)) {
            // wait: no cdc-worker answered; ask again until the deadline
            if (System.nanoTime() + RETRY_MS * 1_000_000 >= deadline) {
                session.pendingJoins.remove(j.topic());
                replyError(j, subscribeTimeout(request));
                return;
            }
            session.channel()
                    .eventLoop()
                    .schedule(
                            () -> {
                                if (session.pendingJoins.get(j.topic()) == token) {
                                    startChecks(j, request, claims, token, gate, privateChannel, deadline);
                                }
                            },
                            RETRY_MS,
                            TimeUnit.MILLISECONDS);
            return;
        }
        session.pendingJoins.remove(j.topic());
        PrivateChannels.Gate verdict = gate.join();
        if (verdict.refusal() != null) {
            replyError(j, verdict.refusal());
            return;
        }
        boolean unavailable = false;
        List<String> notices = new ArrayList<>();
        for (CompletableFuture<Outcome> c : checks) {
            Outcome outcome = c.join();
            if (outcome instanceof Outcome.Invalid invalid) {
                replyError(j, invalid.reason());
                return;
            }
            if (outcome instanceof Outcome.Unavailable u) {
                log.debug("subscription check unavailable for {}: {}", j.topic(), u.detail());
                unavailable = true;
            }
            if (outcome instanceof Outcome.Valid valid && valid.notice() != null) {
                notices.add(valid.notice());
            }
        }
        List<PostgresBinding> bindings = new ArrayList<>();
        for (JoinRequest.Binding b : request.bindings()) {
            bindings.add(new PostgresBinding(
                    b.id(), UUID.randomUUID().toString(), b.event(), b.table(), b.filter(), b.echo(), b.select()));
        }
        accept(j, request, claims, bindings, unavailable, notices, privateChannel, verdict, deadline);
    }

    private static String subscribeTimeout(JoinRequest request) {
        return "PostgresChangesSubscribeTimeout: postgres_changes did not become active within " + request.waitMs()
                + " ms";
    }

    /**
     * @param notices what valid bindings will not receive ({@code "Code: message"}), pushed as
     *     {@code system} errors right after "Subscribed to PostgreSQL", so nothing is withheld silently
     */
    private void accept(
            PhoenixMessage.Join j,
            JoinRequest request,
            Claims claims,
            List<PostgresBinding> bindings,
            boolean cdcUnavailable,
            List<String> notices,
            boolean privateChannel,
            PrivateChannels.Gate access,
            long deadline) {
        Membership m = new Membership(
                session,
                j.topic(),
                j.joinRef(),
                request.self(),
                request.ack(),
                request.config(),
                bindings,
                claims,
                request.accessToken(),
                privateChannel);
        m.readAccess(access.readBroadcast(), access.readPresence());
        lifecycle.activate(m);
        if (bindings.isEmpty()) {
            replyOk(j, m, bindings);
            replay(m, j, request.replay());
            return;
        }
        // The registry entries are written before the ok reply: realtime-js reports SUBSCRIBED on
        // that reply, and a change committed right after it must find the binding registered (the
        // cdc-worker matches every change read after an acknowledged put against a view holding
        // it, docs/design.md C8). With postgres_changes_options.wait the reply also waits until
        // the cdc-worker is active, and fails at the deadline.
        boolean[] replied = {false};
        if (deadline != 0) {
            session.channel()
                    .eventLoop()
                    .schedule(
                            () -> failWait(j, m, request, replied),
                            Math.max(0, deadline - System.nanoTime()),
                            TimeUnit.NANOSECONDS);
        }
        lifecycle
                .putEntries(m)
                .whenComplete((v, err) -> onEventLoop(j, () -> {
                    if (!m.active() || replied[0]) {
                        return;
                    }
                    if (deadline != 0 && err != null) {
                        // wait: without the registry entry no change can flow
                        replied[0] = true;
                        LogCode.RegistryPutFailed.warn(log, "{} on {}: {}", m.topic(), session, err.toString());
                        lifecycle.close(m, false);
                        replyError(j, Reasons.REGISTRY_UNAVAILABLE);
                        return;
                    }
                    if (deadline != 0 && services.fanout().cdcKnownInactive()) {
                        awaitActive(j, m, replied, () -> finishAccept(j, request, m, bindings, false, null, notices));
                        return;
                    }
                    replied[0] = true;
                    finishAccept(j, request, m, bindings, cdcUnavailable, err, notices);
                }));
    }

    /** With wait: re-checks the cdc-worker's status every {@value #RETRY_MS} ms until active (or the deadline). */
    private void awaitActive(PhoenixMessage.Join j, Membership m, boolean[] replied, Runnable then) {
        if (!m.active() || replied[0]) {
            return;
        }
        if (!services.fanout().cdcKnownInactive()) {
            replied[0] = true;
            then.run();
            return;
        }
        session.channel().eventLoop().schedule(() -> awaitActive(j, m, replied, then), RETRY_MS, TimeUnit.MILLISECONDS);
    }

    private void failWait(PhoenixMessage.Join j, Membership m, JoinRequest request, boolean[] replied) {
        if (replied[0] || !m.active()) {
            return;
        }
        replied[0] = true;
        lifecycle.close(m, false);
        replyError(j, subscribeTimeout(request));
    }

    private void finishAccept(
            PhoenixMessage.Join j,
            JoinRequest request,
            Membership m,
            List<PostgresBinding> bindings,
            boolean cdcUnavailable,
            Throwable err,
            List<String> notices) {
        replyOk(j, m, bindings);
        replay(m, j, request.replay());
        if (err != null) {
            LogCode.RegistryPutFailed.warn(log, "{} on {}: {}", m.topic(), session, err.toString());
        }
        if (cdcUnavailable) {
            m.push(
                    "system",
                    SystemMessages.error(SystemMessages.EXT_POSTGRES, Reasons.CDC_UNAVAILABLE, m.channelName()));
        } else if (err != null) {
            m.push(
                    "system",
                    SystemMessages.error(SystemMessages.EXT_POSTGRES, Reasons.REGISTRY_UNAVAILABLE, m.channelName()));
            return;
        } else {
            m.push("system", SystemMessages.ok(SystemMessages.EXT_POSTGRES, Reasons.SUBSCRIBED, m.channelName()));
        }
        for (String notice : notices) {
            m.push("system", SystemMessages.error(SystemMessages.EXT_POSTGRES, notice, m.channelName()));
        }
        if (services.fanout().cdcKnownInactive()) {
            m.push(
                    "system",
                    SystemMessages.error(
                            SystemMessages.EXT_POSTGRES, services.fanout().inactiveMessage(), m.channelName()));
        }
    }

    /**
     * History after the ok reply (realtime-js drops channel pushes before it):
     * {@code config.broadcast.replay}, or the SSE {@code Last-Event-ID} of the join.
     */
    private void replay(Membership m, PhoenixMessage.Join j, JoinRequest.Replay replay) {
        if (replay != null && m.isPrivate()) {
            privateChannels.replay(m, replay.sinceMs(), replay.limit()); // durable, cluster-wide (H2)
        } else if (replay != null) {
            services.fanout().replaySince(m, replay.sinceMs(), replay.limit());
        }
        if (j.lastEventId() != null) {
            services.fanout().resume(m, j.lastEventId());
        }
    }

    /** Runs a step of the join on the connection's event loop; a failure is logged, never thrown into Netty. */
    private void onEventLoop(PhoenixMessage.Join j, Runnable step) {
        session.channel().eventLoop().execute(() -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                LogCode.HandlerFailed.warn(log, "join of {} on {}: {}", j.topic(), session, e.toString(), e);
            }
        });
    }

    private void replyOk(PhoenixMessage.Join j, Membership m, List<PostgresBinding> bindings) {
        ObjectNode response = JsonNodeFactory.instance.objectNode();
        ArrayNode echoed = response.putArray("postgres_changes");
        bindings.forEach(b -> echoed.add(b.echo()));
        session.send(new PhoenixMessage.Reply(j.joinRef(), j.ref(), j.topic(), "ok", response));
        try {
            services.presence().onJoined(m);
        } catch (RuntimeException e) {
            LogCode.PresenceJoinFailed.warn(log, "{}: {}", m.topic(), e.toString());
        }
    }

    private void replyError(PhoenixMessage.Join j, String reason) {
        session.send(new PhoenixMessage.Reply(j.joinRef(), j.ref(), j.topic(), "error", Replies.reason(reason)));
    }
}
