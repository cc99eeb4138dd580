package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.fanout.CdcHealth;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.fanout.LocalTopics;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.SystemMessages;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * postgres_changes resume as the channel layer uses it (docs/design.md R): the resume of a join
 * ({@link #join}), a resume started by a later {@code access_token} ({@link #startLate}). A
 * channel takes part through {@link ResumableChannel}; closing it parks or deletes its record
 * ({@link ResumeState#close}). Replica-wide, thread-safe; {@link #off()} when resume is not run
 * (tests).
 */
public final class Resumes {
    private static final Logger log = LoggerFactory.getLogger(Resumes.class);
    /** How long a replica's first join of a project waits for the project's limits (its window). */
    static final long LIMITS_WAIT_MS = 6_000;

    final ResumeServices services;
    final LocalTopics topics;
    final CdcHealth cdc;
    final Fanout fanout;
    final FrontMetrics metrics;
    final String instanceId;
    final Clock clock;

    /**
     * @param services the records, history reads, owners' liveness and windows; null when resume is off
     * @param topics this replica's live channels (a record live here is not adopted twice)
     * @param cdc the slot's last gap (a record behind it cannot be resumed)
     * @param fanout delivers the replayed changes
     * @param instanceId this replica's id (the owner written into claimed records)
     */
    public Resumes(
            ResumeServices services,
            LocalTopics topics,
            CdcHealth cdc,
            Fanout fanout,
            FrontMetrics metrics,
            String instanceId,
            Clock clock) {
        this.services = services;
        this.topics = topics;
        this.cdc = cdc;
        this.fanout = fanout;
        this.metrics = metrics;
        this.instanceId = instanceId;
        this.clock = clock;
    }

    /** Resume not run: no join resumes, no record is written. */
    public static Resumes off() {
        return new Resumes(null, null, null, null, null, null, null);
    }

    /**
     * The resume of a join with these distinct bindings, or null when there is none (resume off,
     * no bindings, no identity).
     */
    public ResumeJoin join(
            List<JoinConfig.Binding> distinct, JoinConfig.PostgresChangesOptions options, Claims claims, String topic) {
        if (services == null || distinct.isEmpty()) {
            return null;
        }
        int window = windowNow(claims.projectId());
        if (window == 0) {
            return null; // resume off for the project
        }
        ResumeKeys.Identity identity = ResumeKeys.identity(claims, options.resumeKey());
        if (identity == null) {
            // a token without sub and no resume_key: no automatic resume (docs/protocol.md), unless an
            // access_token with a sub follows (startLate)
            log.info(
                    "resume of {} in project {}: no identity at join (token without sub, no resume_key)",
                    topic,
                    claims.projectId());
            return null;
        }
        List<ResumeKeys.BindingKey> keys = new ArrayList<>();
        for (JoinConfig.Binding b : distinct) {
            keys.add(new ResumeKeys.BindingKey(b.event(), b.table(), b.filter(), b.select()));
        }
        return record(claims.projectId(), identity, topic, keys, window, options.since());
    }

    /**
     * The project's window as this replica knows it now: 0 when resume is off, -1 when the project's
     * limits were never answered here (a replica's first join of it: the lookup waits for them).
     * known() is read first: an answer is stored before known() turns true, so a window read after
     * a true known() is the answer's (the other way round, an answer landing in between would pair
     * the defaults' 0 with known = true: resume treated as off, silently).
     */
    private int windowNow(String projectId) {
        boolean known = services.limits().known(projectId);
        int window = services.windowSeconds(projectId);
        return window > 0 ? window : known ? 0 : -1;
    }

    private ResumeJoin record(
            String projectId,
            ResumeKeys.Identity identity,
            String topic,
            List<ResumeKeys.BindingKey> keys,
            int window,
            String since) {
        List<String> canonical = new ArrayList<>();
        for (ResumeKeys.BindingKey k : keys) {
            canonical.add(ResumeKeys.canonical(List.of(k)));
        }
        return new ResumeJoin(
                this,
                projectId,
                identity,
                ResumeKeys.record(projectId, identity.key(), topic, keys),
                ResumeKeys.pointer(projectId, identity.key(), topic),
                window,
                since,
                canonical);
    }

    /**
     * After an {@code access_token} gave a live channel new claims: when the channel is not resumable
     * yet (its join had no identity: realtime-js puts {@code access_token} into the join only once
     * its async {@code accessToken} callback resolved, else the join is authorised by the apikey and
     * the user's token follows as an {@code access_token} push) and now has one, starts tracking it
     * exactly as a join with that token would have: a record under the channel's current sub ids
     * (whose registry entries the caller re-put with the new claims, so parked verdicts are the
     * user's), nothing replayed (the channel was live throughout). Event loop only.
     */
    public void startLate(ResumableChannel m) {
        ResumeState state = m.resume();
        if (services == null || m.bindings().isEmpty() || state.starting() || !m.active()) {
            return;
        }
        ResumeKeys.Identity identity = ResumeKeys.identity(m.claims(), state.resumeKey());
        ResumeTracker current = state.tracker();
        if (current != null) {
            if (Objects.equals(identity, state.identity()) || current.replaying()) {
                return; // the same identity: its record goes on (a replay running: decided at its join)
            }
            if (identity != null && identity.key().equals(state.identity().key())) {
                // the same role and subject with other claims (the entries now carry them): the
                // record names the new digest, so only a token with these claims adopts it
                state.attach(current, identity);
                current.claims(identity.claimsDigest());
                return;
            }
            // another identity on this channel (a sign-in as someone else, a sign-out, a resume_key
            // channel that got a sub): the record of the old one is deleted, as its sub ids' entries
            // now carry the new claims; a record under the new identity starts below
            log.info("resume of {}: identity changed by access_token, record deleted", m.topic());
            state.detach();
            current.forget();
        }
        int window = windowNow(m.projectId());
        if (window == 0) {
            return; // resume off for the project
        }
        if (identity == null) {
            return;
        }
        List<ResumeKeys.BindingKey> keys = new ArrayList<>();
        for (PostgresBinding b : m.bindings()) {
            keys.add(new ResumeKeys.BindingKey(b.event(), b.table(), b.filter(), b.select()));
        }
        ResumeJoin late = record(m.projectId(), identity, m.topic(), keys, window, null);
        state.starting(true);
        // the record starts after what already reached the socket: those frames are not replayed
        String upTo = state.lastWritten();
        m.writeBarrier().addListener(f -> {
            if (!f.isSuccess() || !m.active()) {
                state.starting(false);
                return; // the socket closed meanwhile: its entries were removed, nothing to resume
            }
            CompletableFuture.supplyAsync(
                            () -> late.claimLate(m, upTo),
                            r -> Thread.ofVirtual().start(r))
                    .exceptionally(e -> {
                        LogCode.HandlerFailed.warn(log, "late resume of {}: {}", m.topic(), e.toString());
                        return null;
                    })
                    .thenAccept(p -> m.recipient().eventLoop().execute(() -> late.attachLate(m, p)));
        });
    }

    /**
     * Until when a closing channel's registry entries and record are parked: the project's window
     * from now (docs/design.md R).
     */
    public long parkedUntil(String projectId) {
        return clock.millis() + services.windowSeconds(projectId) * 1000L;
    }

    /** Tells the channel its rejoin was not resumed ({@code ResumeNotPossible}), and counts it. */
    void notPossible(ResumableChannel m, ResumeReason reason) {
        metrics.resumeNotPossible(reason.name());
        m.push("system", SystemMessages.resumeNotPossible(reason.name(), m.channelName()));
    }
}
