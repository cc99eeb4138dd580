package dev.aura.realtime.front.postgres;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.fanout.CdcHealth;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.fanout.Subscriber;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.relay.SubscriptionChecker;
import dev.aura.realtime.front.relay.SubscriptionChecker.Outcome;
import dev.aura.realtime.front.relay.SubscriptionRegistry;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The postgres_changes side of a channel (docs/design.md C8, D6): the join-time check of every
 * distinct binding by a cdc-worker, the channel's registry entries (put before the ok reply,
 * re-put with a new token, parked or removed when it closes), the {@code system} messages after
 * the reply ("Subscribed to PostgreSQL", the CDC's state, the checks' notices), and
 * {@code config.broadcast.replication_ready}. Replica-wide, thread-safe; the channel layer calls
 * it from the connection's event loop.
 */
public final class PostgresChanges {
    private static final Logger log = LoggerFactory.getLogger(PostgresChanges.class);
    /** How often an unanswered check, an inactive CDC or replication readiness is looked at again. */
    public static final long RETRY_MS = 250;

    /**
     * What a join's checks said.
     *
     * @param refusal the first binding a cdc-worker refused (Supabase's words), or null
     * @param cdcUnavailable some binding's check was not answered (the join is accepted)
     * @param notices what valid bindings will not receive ({@code "Code: message"}), pushed after
     *     "Subscribed to PostgreSQL", so nothing is withheld silently
     */
    public record Verdict(String refusal, boolean cdcUnavailable, List<String> notices) {
        /** This verdict once the cdc-worker answered after all (a join that waited for it). */
        public Verdict answered() {
            return new Verdict(refusal, false, notices);
        }
    }

    private final SubscriptionChecker checker;
    private final SubscriptionRegistry registry;
    private final CdcHealth cdc;
    private final ObjectMapper mapper;
    private final String instanceId;
    private final Clock clock;
    private final long replicationReadyTimeoutMs;

    /**
     * @param instanceId this replica's id (the registry entries' {@code instance})
     * @param replicationReadyTimeoutMs how long {@code replication_ready} waits for changes to flow
     */
    public PostgresChanges(
            SubscriptionChecker checker,
            SubscriptionRegistry registry,
            CdcHealth cdc,
            ObjectMapper mapper,
            String instanceId,
            Clock clock,
            long replicationReadyTimeoutMs) {
        this.checker = checker;
        this.registry = registry;
        this.cdc = cdc;
        this.mapper = mapper;
        this.instanceId = instanceId;
        this.clock = clock;
        this.replicationReadyTimeoutMs = replicationReadyTimeoutMs;
    }

    /** A join's binding checks, one per distinct binding; none of them fails. */
    public record Checks(List<CompletableFuture<Outcome>> answers) {
        /** No check asked yet. */
        public static final Checks NONE = new Checks(List.of());

        /** Completes once every check answered. */
        public CompletableFuture<Void> answered() {
            return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new));
        }

        /** Whether some answered check says no cdc-worker answered it. */
        public boolean anyUnavailable() {
            return answers.stream().anyMatch(c -> c.join() instanceof Outcome.Unavailable);
        }

        /** The verdict of the answered checks (of the join of {@code topic}). */
        public Verdict verdict(String topic) {
            boolean unavailable = false;
            List<String> notices = new ArrayList<>();
            for (CompletableFuture<Outcome> c : answers) {
                Outcome outcome = c.join();
                if (outcome instanceof Outcome.Invalid invalid) {
                    return new Verdict(invalid.reason(), false, List.of());
                }
                if (outcome instanceof Outcome.Unavailable u) {
                    log.debug("subscription check unavailable for {}: {}", topic, u.detail());
                    unavailable = true;
                }
                if (outcome instanceof Outcome.Valid valid && valid.notice() != null) {
                    notices.add(valid.notice());
                }
            }
            return new Verdict(null, unavailable, notices);
        }
    }

    /** Asks a cdc-worker to check every distinct binding under {@code claims}. */
    public Checks check(List<JoinConfig.Binding> distinct, Claims claims) {
        List<CompletableFuture<Outcome>> asked = new ArrayList<>();
        for (JoinConfig.Binding b : distinct) {
            asked.add(check(new SubscriptionCheck.Request(
                    claims.projectId(), b.table(), b.filter(), b.event(), claims.role(), b.select())));
        }
        return new Checks(asked);
    }

    private CompletableFuture<Outcome> check(SubscriptionCheck.Request request) {
        try {
            return checker.check(request).exceptionally(e -> new Outcome.Unavailable(String.valueOf(e)));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(new Outcome.Unavailable(e.toString()));
        }
    }

    /** Puts (or re-puts with new claims) every registry entry of {@code s}. */
    public CompletableFuture<Void> putEntries(Subscriber s, Claims claims) {
        List<CompletableFuture<Void>> puts = new ArrayList<>();
        for (PostgresBinding b : s.bindings()) {
            puts.add(registry.put(entry(s.projectId(), b, claims)));
        }
        return CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new));
    }

    private SubscriptionEntry entry(String projectId, PostgresBinding b, Claims c) {
        JsonNode claims;
        try {
            claims = mapper.readTree(c.json());
        } catch (JsonProcessingException e) {
            // the verifier parsed this very text: failing here is a bug, not a client error
            throw new IllegalStateException("claims of a verified token are not JSON", e);
        }
        return new SubscriptionEntry(
                b.subId(),
                projectId,
                b.table(),
                b.event(),
                b.filter(),
                c.role(),
                claims,
                c.expiresAt().toEpochMilli(),
                instanceId,
                b.select());
    }

    /**
     * The channel closed: its registry entries are parked until {@code untilMs} (a resumable channel
     * whose socket closed, docs/design.md R), or removed when {@code untilMs} is 0.
     */
    public void closeEntries(Subscriber s, long untilMs) {
        for (PostgresBinding b : s.bindings()) {
            String key = SubscriptionEntry.key(s.projectId(), b.subId());
            if (untilMs > 0) {
                registry.park(key, untilMs);
            } else {
                registry.remove(key);
            }
        }
    }

    /** The reason of the quota refusal behind a failed put (over the project's share of the registry), or null. */
    public static String quotaRefusal(Throwable err) {
        for (Throwable t = err; t != null; t = t.getCause()) {
            if (t instanceof SubscriptionRegistry.QuotaExceeded q) {
                return q.getMessage();
            }
        }
        return null;
    }

    /** Whether the cdc-worker reports itself inactive (changes do not flow). */
    public boolean knownInactive() {
        return cdc.knownInactive();
    }

    /**
     * After the ok reply of a channel with bindings: "Subscribed to PostgreSQL", or the reason its
     * bindings were not validated or registered, then the checks' notices and the CDC's state.
     *
     * @param putFailed why the registry entries were not written, or null
     */
    public void subscribed(Subscriber m, Verdict verdict, Throwable putFailed) {
        if (putFailed != null) {
            LogCode.RegistryPutFailed.warn(log, "{} on {}: {}", m.topic(), m.recipient(), putFailed.toString());
        }
        if (verdict.cdcUnavailable()) {
            m.push(
                    "system",
                    SystemMessages.error(SystemMessages.EXT_POSTGRES, Reasons.CDC_UNAVAILABLE, m.channelName()));
        } else if (putFailed != null) {
            m.push(
                    "system",
                    SystemMessages.error(SystemMessages.EXT_POSTGRES, Reasons.REGISTRY_UNAVAILABLE, m.channelName()));
        } else {
            m.push("system", SystemMessages.ok(SystemMessages.EXT_POSTGRES, Reasons.SUBSCRIBED, m.channelName()));
        }
        if (verdict.cdcUnavailable() || putFailed == null) {
            for (String notice : verdict.notices()) {
                m.push("system", SystemMessages.error(SystemMessages.EXT_POSTGRES, notice, m.channelName()));
            }
            if (cdc.knownInactive()) {
                m.push(
                        "system",
                        SystemMessages.error(SystemMessages.EXT_POSTGRES, cdc.inactiveMessage(), m.channelName()));
            }
        }
    }

    /**
     * {@code config.broadcast.replication_ready}: pushes {@code system} {@code ok} "Replication
     * connection established" once changes flow to this replica ({@link CdcHealth#replicationReady}),
     * checked at once and then every {@value #RETRY_MS} ms, or an {@code error} when they do not
     * within the timeout ({@code WS_REPLICATION_READY_TIMEOUT_MS}). Nothing once the channel is left
     * or closed. Event loop of the channel's connection.
     */
    public void awaitReplication(Subscriber m) {
        awaitReplication(m, clock.millis() + replicationReadyTimeoutMs);
    }

    private void awaitReplication(Subscriber m, long deadlineMs) {
        if (!m.active()) {
            return;
        }
        if (cdc.replicationReady()) {
            m.push("system", SystemMessages.ok(SystemMessages.EXT_SYSTEM, Reasons.REPLICATION_READY, m.channelName()));
            return;
        }
        long leftMs = deadlineMs - clock.millis();
        if (leftMs <= 0) {
            m.push(
                    "system",
                    SystemMessages.error(
                            SystemMessages.EXT_SYSTEM,
                            Reasons.replicationNotReady(replicationReadyTimeoutMs, cdc.notReadyReason()),
                            m.channelName()));
            return;
        }
        m.recipient()
                .eventLoop()
                .schedule(
                        () -> onLoop(m, () -> awaitReplication(m, deadlineMs)),
                        Math.min(RETRY_MS, leftMs),
                        TimeUnit.MILLISECONDS);
    }

    /** Runs a step on the channel's event loop; a failure is logged, never thrown into Netty. */
    private static void onLoop(Subscriber m, Runnable step) {
        m.recipient().eventLoop().execute(() -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                LogCode.HandlerFailed.warn(log, "join of {} on {}: {}", m.topic(), m.recipient(), e.toString(), e);
            }
        });
    }
}
