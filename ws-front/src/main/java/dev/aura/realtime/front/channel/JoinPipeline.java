package dev.aura.realtime.front.channel;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.auth.Credentials;
import dev.aura.realtime.front.broadcast.Broadcasts;
import dev.aura.realtime.front.broadcast.PrivateChannels;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.postgres.PostgresChanges;
import dev.aura.realtime.front.presence.PresenceExtension;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.resume.Resumes;
import dev.aura.realtime.front.session.ClientSession;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code phx_join} of one connection, as a pipeline of named steps (event loop only):
 *
 * <ol>
 *   <li>{@link #admit}: the topic, the connection's join rate, the project's joins and the
 *       subscription checks the join causes ({@link ProjectQuotas#admitJoin}: identical bindings
 *       are checked and registered once), the channel count, the config as the codec typed it. A
 *       second join of a joined topic first closes the old channel with {@code phx_close} carrying
 *       the old join ref, as Phoenix does; a later join or a leave supersedes a join in flight.
 *   <li>{@link #authenticate}: the join's {@code access_token} (else the connection's apikey) is
 *       verified ({@link Credentials}: a JWT or a project API key), of the apikey's project, and
 *       not expired (refused before anything, history or presence, is sent, as Supabase's join
 *       refuses it). When its verification must ask a cdc-worker, the connection's later events
 *       wait for it ({@link InboundHold}).
 *   <li>{@link #check}: a cdc-worker checks every distinct binding, and the channel's gate (a
 *       private channel's read check, refused with Supabase's "Unauthorized: You do not have
 *       permissions to read from this Channel topic", or the project's {@code private_only} for a
 *       public one, docs/design.md H1); resume's lookup runs beside them. With
 *       {@code postgres_changes_options.wait}, unanswered checks are asked again until its deadline.
 *   <li>{@link #planResume}: one binding (one registry entry, one sub id) per distinct
 *       subscription: the sub ids of the record resume adopts, or fresh ones (docs/design.md R).
 *   <li>{@link #register}: the channel goes live and its registry entries are written before the
 *       ok reply (realtime-js reports SUBSCRIBED on that reply, and a change committed right after
 *       it must find the binding registered, docs/design.md C8); with {@code wait}, also until the
 *       cdc-worker is active, failing at the deadline.
 *   <li>{@link #reply}: ok with the bindings echoed in client order, the history replay
 *       ({@code config.broadcast.replay}, or the SSE endpoint's {@code Last-Event-ID}), the
 *       postgres_changes {@code system} messages ("Subscribed to PostgreSQL" or why not), resume's
 *       replay, {@code replication_ready}.
 * </ol>
 *
 * Any refusal is the join's error reply with its reason ({@link #refuse}).
 */
final class JoinPipeline {
    private static final Logger log = LoggerFactory.getLogger(JoinPipeline.class);

    private final ClientSession session;
    private final ChannelTable table;
    private final ChannelLifecycle lifecycle;
    private final Credentials credentials;
    private final InboundHold hold;
    private final ProjectQuotas quotas;
    private final PostgresChanges postgres;
    private final PrivateChannels privateChannels;
    private final Broadcasts broadcasts;
    private final Resumes resumes;
    private final PresenceExtension presence;
    private final Clock clock;

    JoinPipeline(
            ClientSession session,
            ChannelTable table,
            ChannelLifecycle lifecycle,
            Credentials credentials,
            InboundHold hold,
            ProjectQuotas quotas,
            PostgresChanges postgres,
            PrivateChannels privateChannels,
            Broadcasts broadcasts,
            Resumes resumes,
            PresenceExtension presence,
            Clock clock) {
        this.session = session;
        this.table = table;
        this.lifecycle = lifecycle;
        this.credentials = credentials;
        this.hold = hold;
        this.quotas = quotas;
        this.postgres = postgres;
        this.privateChannels = privateChannels;
        this.broadcasts = broadcasts;
        this.resumes = resumes;
        this.presence = presence;
        this.clock = clock;
    }

    void join(PhoenixMessage.Join j) {
        if (!admit(j)) {
            return;
        }
        String token = j.config().accessToken();
        CompletableFuture<Claims> check = token == null
                ? CompletableFuture.completedFuture(session.apiKeyClaims())
                : credentials.verify(token); // kept answers complete at once, see Credentials
        hold.after(check, () -> joinAs(j, check));
    }

    /** Steps 2 to 6, once the join's token was checked. */
    private void joinAs(PhoenixMessage.Join j, CompletableFuture<Claims> check) {
        Claims claims = authenticate(j, check);
        if (claims == null) {
            return;
        }
        JoinConfig config = j.config();
        Joining joining = new Joining(
                j,
                claims,
                privateChannels.gate(j.topic().substring(Topics.PREFIX.length()), config.privateChannel(), claims),
                resumes.join(config.distinct(), config.postgresChangesOptions(), claims, j.topic()));
        table.joining(joining);
        check(joining);
    }

    /** Step 1: whether the join may go on (else it was refused). */
    private boolean admit(PhoenixMessage.Join j) {
        String refusal = Topics.joinRefusal(j.topic());
        if (refusal == null && !session.tryJoin(clock.millis())) {
            refusal = Reasons.TOO_MANY_JOINS;
        }
        if (refusal == null) {
            refusal = admitToProject(j);
        }
        if (refusal == null) {
            refusal = j.refusal(); // the config the codec could not type, in its place among the refusals
        }
        if (refusal != null) {
            refuse(j, refusal);
            return false;
        }
        return true;
    }

    /**
     * The project's joins and the checks this join causes, then the connection's channel count
     * (after a joined or joining channel of the topic made room); null when admitted.
     */
    private String admitToProject(PhoenixMessage.Join j) {
        String projectId = session.apiKeyClaims().projectId();
        String overQuota =
                quotas.admitJoin(projectId, j.config() == null ? 0 : j.config().checks());
        if (overQuota != null) {
            return overQuota;
        }
        Membership previous = table.joined(j.topic());
        if (previous != null) {
            lifecycle.close(previous, true, true); // parked: the new join may resume it
        }
        table.endJoining(j.topic());
        if (table.size() >= quotas.quota(projectId).maxChannelsPerClient()) {
            return Reasons.TOO_MANY_CHANNELS;
        }
        return null;
    }

    /** Step 2: the join's claims, or null when refused. */
    private Claims authenticate(PhoenixMessage.Join j, CompletableFuture<Claims> check) {
        Claims claims;
        try {
            claims = check.join();
        } catch (CompletionException | CancellationException e) {
            refuse(j, Credentials.refusal(e).reason());
            return null;
        }
        if (!claims.projectId().equals(session.apiKeyClaims().projectId())) {
            refuse(j, Reasons.PROJECT_MISMATCH);
            return null;
        }
        String expired = expired(claims);
        if (expired != null) {
            // the connect-time apikey expired and no new access_token came with the join
            refuse(j, expired);
            return null;
        }
        return claims;
    }

    /** Step 3: asks the checks (again, with wait), then reads them once all, the gate and resume's lookup answered. */
    private void check(Joining j) {
        j.checks = postgres.check(j.config.distinct(), j.claims);
        List<CompletableFuture<?>> all = new ArrayList<>();
        all.add(j.checks.answered());
        all.add(j.gate);
        if (j.resume != null) {
            all.add(j.resume.lookup());
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new))
                .whenComplete((v, e) -> onEventLoop(j, () -> checked(j)));
    }

    private void checked(Joining j) {
        if (!table.current(j)) {
            abandonResume(j);
            return; // superseded by a later join or a leave
        }
        if (!session.channel().isActive()) {
            table.endJoining(j.topic());
            abandonResume(j);
            return;
        }
        if (j.deadline != 0 && j.checks.anyUnavailable()) {
            // wait: no cdc-worker answered; ask again until the deadline
            if (System.nanoTime() + PostgresChanges.RETRY_MS * 1_000_000 >= j.deadline) {
                table.endJoining(j.topic());
                refuse(
                        j.join,
                        Reasons.subscribeTimeout(
                                j.config.postgresChangesOptions().waitMs()));
                return;
            }
            session.eventLoop()
                    .schedule(
                            () -> {
                                if (table.current(j)) {
                                    check(j);
                                }
                            },
                            PostgresChanges.RETRY_MS,
                            TimeUnit.MILLISECONDS);
            return;
        }
        table.endJoining(j.topic());
        String expired = expired(j.claims); // it may have expired while the checks ran
        if (expired != null) {
            abandonResume(j);
            refuse(j.join, expired);
            return;
        }
        PrivateChannels.Gate gate = j.gate.join();
        if (gate.refusal() != null) {
            abandonResume(j);
            refuse(j.join, gate.refusal());
            return;
        }
        PostgresChanges.Verdict verdict = j.checks.verdict(j.topic());
        if (verdict.refusal() != null) {
            abandonResume(j);
            refuse(j.join, verdict.refusal());
            return;
        }
        register(j, planResume(j), gate, verdict);
    }

    /** A join that goes no further gives back the resume record its lookup claimed. */
    private static void abandonResume(Joining j) {
        if (j.resume != null) {
            j.resume.abandon();
        }
    }

    /** Step 4: the bindings with their sub ids: the record resume adopts (or claimed), else fresh ones. */
    private List<PostgresBinding> planResume(Joining j) {
        j.plan = j.resume == null ? null : j.resume.lookup().join();
        List<PostgresBinding> bindings = new ArrayList<>();
        List<JoinConfig.Binding> distinct = j.config.distinct();
        for (int i = 0; i < distinct.size(); i++) {
            JoinConfig.Binding b = distinct.get(i);
            String subId = j.plan == null ? UUID.randomUUID().toString() : j.resume.subId(j.plan, i);
            bindings.add(new PostgresBinding(b.id(), subId, b.event(), b.table(), b.filter(), b.echo(), b.select()));
        }
        return bindings;
    }

    /** Step 5: the channel goes live; its registry entries are written, then it is replied to. */
    private void register(
            Joining j, List<PostgresBinding> bindings, PrivateChannels.Gate gate, PostgresChanges.Verdict verdict) {
        Membership m = new Membership(session, j.topic(), j.join.joinRef(), j.config, bindings, j.claims);
        m.access().read(gate.readBroadcast(), gate.readPresence());
        if (j.plan != null) {
            j.resume.attach(m, j.plan);
        }
        lifecycle.activate(m);
        if (bindings.isEmpty()) {
            reply(j, m, verdict, null);
            return;
        }
        if (j.deadline != 0) {
            session.eventLoop()
                    .schedule(() -> failWait(j, m), Math.max(0, j.deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        postgres.putEntries(m, m.claims())
                .whenComplete((v, err) -> onEventLoop(j, () -> {
                    if (!m.active() || j.replied) {
                        return;
                    }
                    String overQuota = PostgresChanges.quotaRefusal(err);
                    if (overQuota != null) {
                        // over the project's share of the registry: refused, nothing of it stays registered
                        j.replied = true;
                        lifecycle.close(m, false);
                        refuse(j.join, overQuota);
                        return;
                    }
                    if (j.deadline != 0 && err != null) {
                        // wait: without the registry entry no change can flow
                        j.replied = true;
                        LogCode.RegistryPutFailed.warn(log, "{} on {}: {}", m.topic(), session, err.toString());
                        lifecycle.close(m, false);
                        refuse(j.join, Reasons.REGISTRY_UNAVAILABLE);
                        return;
                    }
                    if (j.deadline != 0 && postgres.knownInactive()) {
                        awaitActive(j, m, verdict.answered());
                        return;
                    }
                    j.replied = true;
                    reply(j, m, verdict, err);
                }));
    }

    /** With wait: re-checks the cdc-worker's status every {@value PostgresChanges#RETRY_MS} ms until active (or the deadline). */
    private void awaitActive(Joining j, Membership m, PostgresChanges.Verdict verdict) {
        if (!m.active() || j.replied) {
            return;
        }
        if (!postgres.knownInactive()) {
            j.replied = true;
            reply(j, m, verdict, null);
            return;
        }
        session.eventLoop().schedule(() -> awaitActive(j, m, verdict), PostgresChanges.RETRY_MS, TimeUnit.MILLISECONDS);
    }

    private void failWait(Joining j, Membership m) {
        if (j.replied || !m.active()) {
            return;
        }
        j.replied = true;
        lifecycle.close(m, false);
        refuse(
                j.join,
                Reasons.subscribeTimeout(j.config.postgresChangesOptions().waitMs()));
    }

    /**
     * Step 6: ok, echoing every client binding in client order (realtime-js pairs them index by
     * index; identical ones carry the same id, so a change fires each of their callbacks), then
     * what follows it.
     *
     * @param putFailed why the registry entries were not written, or null
     */
    private void reply(Joining j, Membership m, PostgresChanges.Verdict verdict, Throwable putFailed) {
        ObjectNode response = JsonNodeFactory.instance.objectNode();
        ArrayNode echoed = response.putArray("postgres_changes");
        j.config.bindings().forEach(b -> echoed.add(b.echo()));
        session.send(new PhoenixMessage.Reply(j.join.joinRef(), j.join.ref(), j.topic(), "ok", response));
        try {
            presence.onJoined(m);
        } catch (RuntimeException e) {
            LogCode.PresenceJoinFailed.warn(log, "{}: {}", m.topic(), e.toString());
        }
        broadcasts.replay(m, j.config.broadcast().replay(), j.join.lastEventId());
        if (!m.bindings().isEmpty()) {
            postgres.subscribed(m, verdict, putFailed);
            if (j.plan != null) {
                j.resume.afterSubscribed(m, j.plan); // replay after "Subscribed to PostgreSQL"
            }
        }
        if (j.config.broadcast().replicationReady()) {
            postgres.awaitReplication(m);
        }
    }

    /**
     * @return {@code InvalidJWTToken: Token has expired N seconds ago} (Supabase's words) when the
     *     claims' {@code exp} is not ahead of the clock, else null
     */
    private String expired(Claims claims) {
        String expired = claims.expiredMessage(clock.instant());
        return expired == null ? null : AuthException.INVALID + ": " + expired;
    }

    /** The join's error reply. */
    private void refuse(PhoenixMessage.Join j, String reason) {
        session.send(new PhoenixMessage.Reply(j.joinRef(), j.ref(), j.topic(), "error", Replies.reason(reason)));
    }

    /** Runs a step of the join on the connection's event loop; a failure is logged, never thrown into Netty. */
    private void onEventLoop(Joining j, Runnable step) {
        session.eventLoop().execute(() -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                LogCode.HandlerFailed.warn(log, "join of {} on {}: {}", j.topic(), session, e.toString(), e);
            }
        });
    }
}
