package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.relay.SubscriptionChecker.Outcome;
import dev.aura.realtime.front.relay.SubscriptionRegistry;
import dev.aura.realtime.front.resume.ResumeJoin;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One {@code phx_join} from its checks to its reply (event loop only), held in
 * {@link ClientSession#pendingJoins} by topic until the checks are answered; a later join or a
 * leave of the topic replaces or removes it, which supersedes it. Its steps run in order:
 * {@link #start} asks a cdc-worker about every binding and the channel's gate, {@link #afterChecks}
 * reads the answers (or asks again, with {@code postgres_changes_options.wait}), {@link #accept}
 * makes the channel live and puts the registry entries, {@link #finish} replies ok and pushes the
 * {@code system} messages. See {@link JoinFlow} for the order of a join.
 */
final class PendingJoin {
    private static final Logger log = LoggerFactory.getLogger(PendingJoin.class);
    /** With {@code postgres_changes_options.wait}: how often an unanswered check or an inactive CDC is retried. */
    private static final long RETRY_MS = 250;

    private final JoinFlow flow;
    private final ChannelServices services;
    private final ClientSession session;
    private final PhoenixMessage.Join join;
    private final JoinConfig request;
    private final Claims claims;
    private final boolean privateChannel;
    private final CompletableFuture<PrivateChannels.Gate> gate;
    /** With {@code postgres_changes_options.wait}, the {@code System.nanoTime()} by which changes must flow, else 0. */
    private final long deadline;

    private List<CompletableFuture<Outcome>> checks = List.of();
    /** postgres_changes resume (docs/design.md R), or null. */
    private final ResumeJoin resume;
    /** Its decision, once the channel was accepted. */
    private ResumeJoin.Plan resumePlan;
    /** The reply (ok or error) after the channel went live was sent, or is no longer wanted. */
    private boolean replied;

    PendingJoin(JoinFlow flow, PhoenixMessage.Join join, JoinConfig request, Claims claims) {
        this.flow = flow;
        this.services = flow.services;
        this.session = flow.session;
        this.join = join;
        this.request = request;
        this.claims = claims;
        this.privateChannel = request.privateChannel();
        this.gate = flow.privateChannels.gate(topic().substring(JoinFlow.PREFIX_LENGTH), privateChannel, claims);
        this.resume =
                services.resumes().join(request.distinct(), request.postgresChangesOptions(), claims, join.topic());
        long waitMs = request.postgresChangesOptions().waitMs();
        this.deadline = waitMs > 0 && !request.bindings().isEmpty() ? System.nanoTime() + waitMs * 1_000_000 : 0;
    }

    private String topic() {
        return join.topic();
    }

    private boolean current() {
        return session.pendingJoins.get(topic()) == this;
    }

    /**
     * Asks a cdc-worker to check every distinct binding (identical ones are asked once);
     * {@link #afterChecks} runs once all (and the gate) answered.
     */
    void start() {
        List<CompletableFuture<Outcome>> asked = new ArrayList<>();
        for (JoinConfig.Binding b : request.distinct()) {
            asked.add(check(new SubscriptionCheck.Request(
                    claims.projectId(), b.table(), b.filter(), b.event(), claims.role(), b.select())));
        }
        checks = asked;
        List<CompletableFuture<?>> all = new ArrayList<>(asked);
        all.add(gate);
        if (resume != null) {
            all.add(resume.lookup());
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> onEventLoop(this::afterChecks));
    }

    private CompletableFuture<Outcome> check(SubscriptionCheck.Request request) {
        try {
            return services.checker().check(request).exceptionally(e -> new Outcome.Unavailable(String.valueOf(e)));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(new Outcome.Unavailable(e.toString()));
        }
    }

    private void afterChecks() {
        if (!current()) {
            return; // superseded by a later join or a leave
        }
        if (!session.channel().isActive()) {
            session.pendingJoins.remove(topic());
            return;
        }
        if (deadline != 0 && checks.stream().anyMatch(c -> c.join() instanceof Outcome.Unavailable)) {
            // wait: no cdc-worker answered; ask again until the deadline
            if (System.nanoTime() + RETRY_MS * 1_000_000 >= deadline) {
                session.pendingJoins.remove(topic());
                flow.replyError(join, subscribeTimeout());
                return;
            }
            session.channel()
                    .eventLoop()
                    .schedule(
                            () -> {
                                if (current()) {
                                    start();
                                }
                            },
                            RETRY_MS,
                            TimeUnit.MILLISECONDS);
            return;
        }
        session.pendingJoins.remove(topic());
        String expired = flow.expired(claims); // it may have expired while the checks ran
        if (expired != null) {
            flow.replyError(join, expired);
            return;
        }
        PrivateChannels.Gate verdict = gate.join();
        if (verdict.refusal() != null) {
            flow.replyError(join, verdict.refusal());
            return;
        }
        boolean unavailable = false;
        List<String> notices = new ArrayList<>();
        for (CompletableFuture<Outcome> c : checks) {
            Outcome outcome = c.join();
            if (outcome instanceof Outcome.Invalid invalid) {
                flow.replyError(join, invalid.reason());
                return;
            }
            if (outcome instanceof Outcome.Unavailable u) {
                log.debug("subscription check unavailable for {}: {}", topic(), u.detail());
                unavailable = true;
            }
            if (outcome instanceof Outcome.Valid valid && valid.notice() != null) {
                notices.add(valid.notice());
            }
        }
        accept(verdict, unavailable, notices);
    }

    private String subscribeTimeout() {
        return "PostgresChangesSubscribeTimeout: postgres_changes did not become active within "
                + request.postgresChangesOptions().waitMs()
                + " ms";
    }

    /**
     * @param notices what valid bindings will not receive ({@code "Code: message"}), pushed as
     *     {@code system} errors right after "Subscribed to PostgreSQL", so nothing is withheld silently
     */
    private void accept(PrivateChannels.Gate access, boolean cdcUnavailable, List<String> notices) {
        // one binding (one registry entry, one sub id) per distinct subscription; the reply echoes all
        // with resume, the sub ids are the adopted record's (or fresh ones it claimed)
        resumePlan = resume == null ? null : resume.lookup().join();
        List<PostgresBinding> bindings = new ArrayList<>();
        List<JoinConfig.Binding> distinct = request.distinct();
        for (int i = 0; i < distinct.size(); i++) {
            JoinConfig.Binding b = distinct.get(i);
            String subId = resumePlan == null ? UUID.randomUUID().toString() : resume.subId(resumePlan, i);
            bindings.add(new PostgresBinding(b.id(), subId, b.event(), b.table(), b.filter(), b.echo(), b.select()));
        }
        Membership m = new Membership(
                session,
                topic(),
                join.joinRef(),
                request.broadcast().self(),
                request.broadcast().ack(),
                request.presence(),
                bindings,
                claims,
                request.accessToken(),
                privateChannel,
                request.postgresChangesOptions().resumeKey());
        m.readAccess(access.readBroadcast(), access.readPresence());
        if (request.postgresChangesOptions().eventId()) {
            m.eventIds(true);
        }
        if (resumePlan != null) {
            resume.attach(m, resumePlan);
        }
        flow.lifecycle.activate(m);
        if (bindings.isEmpty()) {
            replyOk(m, bindings);
            replay(m);
            awaitReplication(m);
            return;
        }
        // The registry entries are written before the ok reply: realtime-js reports SUBSCRIBED on
        // that reply, and a change committed right after it must find the binding registered (the
        // cdc-worker matches every change read after an acknowledged put against a view holding
        // it, docs/design.md C8). With postgres_changes_options.wait the reply also waits until
        // the cdc-worker is active, and fails at the deadline.
        if (deadline != 0) {
            session.channel()
                    .eventLoop()
                    .schedule(() -> failWait(m), Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        flow.lifecycle
                .putEntries(m)
                .whenComplete((v, err) -> onEventLoop(() -> {
                    if (!m.active() || replied) {
                        return;
                    }
                    if (quotaExceeded(err) != null) {
                        // over the project's share of the registry: refused, nothing of it stays registered
                        replied = true;
                        flow.lifecycle.close(m, false);
                        flow.replyError(join, quotaExceeded(err).getMessage());
                        return;
                    }
                    if (deadline != 0 && err != null) {
                        // wait: without the registry entry no change can flow
                        replied = true;
                        LogCode.RegistryPutFailed.warn(log, "{} on {}: {}", m.topic(), session, err.toString());
                        flow.lifecycle.close(m, false);
                        flow.replyError(join, Reasons.REGISTRY_UNAVAILABLE);
                        return;
                    }
                    if (deadline != 0 && services.cdc().knownInactive()) {
                        awaitActive(m, bindings, notices);
                        return;
                    }
                    replied = true;
                    finish(m, bindings, cdcUnavailable, err, notices);
                }));
    }

    /** The quota refusal behind a failed put, or null. */
    private static SubscriptionRegistry.QuotaExceeded quotaExceeded(Throwable err) {
        for (Throwable t = err; t != null; t = t.getCause()) {
            if (t instanceof SubscriptionRegistry.QuotaExceeded q) {
                return q;
            }
        }
        return null;
    }

    /** With wait: re-checks the cdc-worker's status every {@value #RETRY_MS} ms until active (or the deadline). */
    private void awaitActive(Membership m, List<PostgresBinding> bindings, List<String> notices) {
        if (!m.active() || replied) {
            return;
        }
        if (!services.cdc().knownInactive()) {
            replied = true;
            finish(m, bindings, false, null, notices);
            return;
        }
        session.channel()
                .eventLoop()
                .schedule(() -> awaitActive(m, bindings, notices), RETRY_MS, TimeUnit.MILLISECONDS);
    }

    private void failWait(Membership m) {
        if (replied || !m.active()) {
            return;
        }
        replied = true;
        flow.lifecycle.close(m, false);
        flow.replyError(join, subscribeTimeout());
    }

    private void finish(
            Membership m, List<PostgresBinding> bindings, boolean cdcUnavailable, Throwable err, List<String> notices) {
        replyOk(m, bindings);
        replay(m);
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
        } else {
            m.push("system", SystemMessages.ok(SystemMessages.EXT_POSTGRES, Reasons.SUBSCRIBED, m.channelName()));
        }
        if (cdcUnavailable || err == null) {
            for (String notice : notices) {
                m.push("system", SystemMessages.error(SystemMessages.EXT_POSTGRES, notice, m.channelName()));
            }
            if (services.cdc().knownInactive()) {
                m.push(
                        "system",
                        SystemMessages.error(
                                SystemMessages.EXT_POSTGRES, services.cdc().inactiveMessage(), m.channelName()));
            }
        }
        if (resumePlan != null) {
            resume.afterSubscribed(m, resumePlan); // replay after "Subscribed to PostgreSQL"
        }
        awaitReplication(m);
    }

    /**
     * {@code config.broadcast.replication_ready}: pushes {@code system} {@code ok} "Replication
     * connection established" once changes flow to this replica ({@link
     * dev.aura.realtime.front.fanout.CdcHealth#replicationReady}), checked at once and then every
     * {@value #RETRY_MS} ms, or an {@code error} when they do not within
     * {@link Limits#replicationReadyTimeoutMs}. Nothing once the channel is left or closed.
     */
    private void awaitReplication(Membership m) {
        if (request.broadcast().replicationReady()) {
            awaitReplication(m, services.clock().millis() + services.limits().replicationReadyTimeoutMs());
        }
    }

    private void awaitReplication(Membership m, long deadlineMs) {
        if (!m.active()) {
            return;
        }
        if (services.cdc().replicationReady()) {
            m.push("system", SystemMessages.ok(SystemMessages.EXT_SYSTEM, Reasons.REPLICATION_READY, m.channelName()));
            return;
        }
        long leftMs = deadlineMs - services.clock().millis();
        if (leftMs <= 0) {
            m.push(
                    "system",
                    SystemMessages.error(
                            SystemMessages.EXT_SYSTEM,
                            Reasons.replicationNotReady(
                                    services.limits().replicationReadyTimeoutMs(),
                                    services.cdc().notReadyReason()),
                            m.channelName()));
            return;
        }
        session.channel()
                .eventLoop()
                .schedule(
                        () -> onEventLoop(() -> awaitReplication(m, deadlineMs)),
                        Math.min(RETRY_MS, leftMs),
                        TimeUnit.MILLISECONDS);
    }

    /**
     * History after the ok reply (realtime-js drops channel pushes before it):
     * {@code config.broadcast.replay}, or the SSE {@code Last-Event-ID} of the join.
     */
    private void replay(Membership m) {
        JoinConfig.Replay replay = request.broadcast().replay();
        if (replay != null && m.isPrivate()) {
            flow.privateChannels.replay(m, replay.sinceMs(), replay.limit()); // durable, cluster-wide (H2)
        } else if (replay != null) {
            services.fanout().replaySince(m, replay.sinceMs(), replay.limit());
        }
        if (join.lastEventId() != null) {
            services.fanout().resume(m, join.lastEventId());
        }
    }

    /** Runs a step of the join on the connection's event loop; a failure is logged, never thrown into Netty. */
    private void onEventLoop(Runnable step) {
        session.channel().eventLoop().execute(() -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                LogCode.HandlerFailed.warn(log, "join of {} on {}: {}", topic(), session, e.toString(), e);
            }
        });
    }

    /**
     * Echoes every client binding in client order (realtime-js pairs them index by index);
     * identical ones carry the same id, so a change fires each of their callbacks.
     */
    private void replyOk(Membership m, List<PostgresBinding> bindings) {
        ObjectNode response = JsonNodeFactory.instance.objectNode();
        ArrayNode echoed = response.putArray("postgres_changes");
        request.bindings().forEach(b -> echoed.add(b.echo()));
        session.send(new PhoenixMessage.Reply(join.joinRef(), join.ref(), topic(), "ok", response));
        try {
            services.presence().onJoined(m);
        } catch (RuntimeException e) {
            LogCode.PresenceJoinFailed.warn(log, "{}: {}", m.topic(), e.toString());
        }
    }
}
