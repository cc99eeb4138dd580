package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.ResumeRecord;
import dev.aura.realtime.front.log.LogCode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * postgres_changes resume of one join (docs/design.md R). {@link #lookup} runs beside the join's
 * checks: it reads the record of (project, identity, topic, bindings) and the pointer of
 * (project, identity, topic), decides whether the join adopts the record's sub ids, and claims the
 * record (compare-and-set: of two tabs resuming at once one wins, the other gets fresh sub ids and
 * no resume). {@link #attach} gives the channel its {@link ResumeTracker} (holding live changes
 * when it adopts) before it goes live; {@link #afterSubscribed} replays the history after the
 * "Subscribed to PostgreSQL" push, or sends {@code ResumeNotPossible}. A resume started by an
 * {@code access_token} ({@link Resumes#startLate}) claims the record of the channel's current sub
 * ids instead ({@link #claimLate}, {@link #attachLate}).
 */
public final class ResumeJoin {
    private static final Logger log = LoggerFactory.getLogger(ResumeJoin.class);
    /**
     * The decision: the sub id per binding, the record claimed (null: not ours to write) at
     * {@code revision}, the record as it was before an adoption ({@code previous}), what to replay,
     * or why resume is not possible (told after "Subscribed to PostgreSQL").
     */
    public record Plan(
            Map<String, String> subIds,
            ResumeRecord claimed,
            long revision,
            ResumeRecord previous,
            boolean adopted,
            String replayAfter,
            ResumeReason notPossible) {
        static Plan fresh(Map<String, String> subIds, ResumeReason notPossible) {
            return new Plan(subIds, null, 0, null, false, null, notPossible);
        }
    }

    private final Resumes owner;
    private final ResumeServices resumes;
    private final String projectId;
    /** The identity the record is keyed by ({@link ResumeKeys#identity}). */
    private final ResumeKeys.Identity identity;

    private final String recordKey;
    private final String pointerKey;
    /** The project's window; -1 until the project's limits are known (decided on the lookup's thread). */
    private volatile int window;

    private final String since;
    private final List<String> canonical;
    private CompletableFuture<Plan> plan;

    ResumeJoin(
            Resumes owner,
            String projectId,
            ResumeKeys.Identity identity,
            String recordKey,
            String pointerKey,
            int window,
            String since,
            List<String> canonical) {
        this.owner = owner;
        this.resumes = owner.services;
        this.projectId = projectId;
        this.identity = identity;
        this.recordKey = recordKey;
        this.pointerKey = pointerKey;
        this.window = window;
        this.since = since;
        this.canonical = canonical;
    }

    /**
     * Resolves an unknown window (-1) on the lookup's thread: waits for the project's limits; if no
     * cdc-worker answered, keeps the record under the longest window rather than lose a resumable
     * channel's record (a rejoin decides with the window known then). @return whether resume is on
     */
    private boolean awaitWindow() {
        if (window >= 0) {
            return window > 0;
        }
        try {
            window = resumes.windowSecondsAwaited(projectId, Resumes.LIMITS_WAIT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            window = 0;
            return false;
        }
        if (window <= 0 && !resumes.limits().known(projectId)) {
            LogCode.ProjectLimitsUnavailable.warn(
                    log, "{}: window unknown after {} ms, resume record kept", projectId, Resumes.LIMITS_WAIT_MS);
            window = resumes.maxWindowSeconds();
        }
        return window > 0;
    }

    /** The record of a late start, claimed; null when it is not started (off, owned by a live channel, lost). */
    Plan claimLate(ResumableChannel m, String upTo) {
        if (!awaitWindow()) {
            return null;
        }
        ResumeStore store = resumes.store();
        long now = owner.clock.millis();
        ResumeStore.Found found = store.get(recordKey).join();
        if (found != null && found.record().parkedAtMs() == 0 && now <= until(found.record())) {
            // another live channel (a second tab) writes this record: it stays theirs
            log.info("resume of {}: not started on access_token, record live elsewhere {}", recordKey, found.record());
            return null;
        }
        Map<String, String> ids = new LinkedHashMap<>();
        for (int i = 0; i < canonical.size(); i++) {
            ids.put(canonical.get(i), m.bindings().get(i).subId());
        }
        ResumeRecord mine = new ResumeRecord(sorted(ids), upTo, null, now, 0, window, 0, upTo, identity.claimsDigest())
                .ownedBy(owner.instanceId, now, window);
        long revision;
        try {
            revision = store.claim(projectId, recordKey, mine, found == null ? 0 : found.revision(), pointerKey);
        } catch (ResumeStore.Lost lost) {
            log.info("resume of {}: late claim lost ({})", recordKey, lost.getMessage());
            return null;
        } catch (ResumeStore.Refused refused) {
            // not resumable: the channel is told now, as its rejoin will find no record
            log.info("resume of {}: late claim refused ({})", recordKey, refused.getMessage());
            return Plan.fresh(ids, refused.reason());
        } catch (Exception e) {
            throw new CompletionException(e);
        }
        log.info("resume of {}: started on access_token, window {} s, after {}", recordKey, window, upTo);
        return new Plan(ids, mine, revision, null, false, null, null);
    }

    void attachLate(ResumableChannel m, Plan p) {
        ResumeState state = m.resume();
        state.starting(false);
        if (p == null) {
            return;
        }
        if (p.claimed() == null) {
            if (p.notPossible() != null && m.active()) {
                owner.notPossible(m, p.notPossible());
            }
            return;
        }
        if (!m.active()) {
            // closed while the record was claimed: its entries were removed (not parked), so the
            // record could only resume a gap without verdicts; gone
            resumes.store().deleteIfUnchanged(projectId, recordKey, p.revision());
            return;
        }
        if (state.tracker() != null) {
            return; // cannot happen (one start at a time, a join attaches before the channel is live)
        }
        if (!identity.equals(ResumeKeys.identity(m.claims(), state.resumeKey()))) {
            // another access_token changed the identity while this one was claimed: start over for it
            resumes.store().deleteIfUnchanged(projectId, recordKey, p.revision());
            owner.startLate(m);
            return;
        }
        attach(m, p);
        String newest = state.lastWritten();
        ResumeTracker tracker = state.tracker();
        if (tracker != null && newest != null && !newest.equals(p.claimed().lastEventId())) {
            tracker.written(newest); // frames written while the record was claimed
        }
    }

    /** The sub ids in the sorted canonical order records list them in. */
    private List<String> sorted(Map<String, String> ids) {
        List<String> sorted = new ArrayList<>(canonical);
        sorted.sort(null);
        List<String> ordered = new ArrayList<>();
        for (String c : sorted) {
            ordered.add(ids.get(c));
        }
        return ordered;
    }

    /** Starts (once) the lookup and claim; never fails. */
    public CompletableFuture<Plan> lookup() {
        if (plan == null) {
            plan = CompletableFuture.supplyAsync(
                            this::decide, r -> Thread.ofVirtual().start(r))
                    .exceptionally(e -> {
                        LogCode.HandlerFailed.warn(log, "resume lookup: {}", e.toString());
                        return Plan.fresh(fresh(), ResumeReason.history_unavailable);
                    });
        }
        return plan;
    }

    private Map<String, String> fresh() {
        Map<String, String> ids = new LinkedHashMap<>();
        for (String c : canonical) {
            ids.put(c, UUID.randomUUID().toString());
        }
        return ids;
    }

    private Plan decide() {
        if (!awaitWindow()) {
            log.info("resume of {}: off for project {} (limits known: window 0)", recordKey, projectId);
            return Plan.fresh(fresh(), null); // resume off
        }
        ResumeStore store = resumes.store();
        long now = owner.clock.millis();
        ResumeStore.Found found = store.get(recordKey).join();
        ResumeReason notPossible = null;
        if (found == null) {
            String previous = store.pointer(pointerKey).join();
            if (previous != null && !previous.equals(recordKey)) {
                ResumeStore.Found old = store.get(previous).join();
                if (old != null && now <= until(old.record())) {
                    notPossible = ResumeReason.bindings_changed;
                }
            }
            if (notPossible == null && since != null) {
                notPossible = ResumeReason.since_unknown;
            }
        } else if (now > until(found.record())) {
            notPossible = ResumeReason.window_exceeded;
        } else if (lost(found.record().lastEventId())) {
            notPossible = ResumeReason.slot_lost;
        } else if (found.record().subIds().size() != canonical.size()) {
            notPossible = ResumeReason.bindings_changed;
        } else if (found.record().subIds().stream().anyMatch(owner.topics::holds)) {
            // a second live channel of this record on this replica: a fresh subscription, no resume
            return Plan.fresh(fresh(), null);
        } else if (found.record().parkedAtMs() == 0
                && resumes.liveness()
                        .liveElsewhere(found.record().owner(), found.record().subIds())) {
            // a second tab on another replica: sharing its sub ids would let its leave delete ours
            log.info(
                    "resume of {}: record live on {}, a fresh subscription",
                    recordKey,
                    found.record().owner());
            return Plan.fresh(fresh(), null);
        } else if (!identity.claimsDigest().equals(found.record().claimsDigest())) {
            // the same role and subject, other claims: what the record's subscriptions were
            // allowed is not known to be visible to this token (issue 38)
            notPossible = ResumeReason.claims_changed;
        } else if (since != null
                && (!EventIds.valid(since)
                        || found.record().firstEventId() == null
                        || EventIds.compare(since, found.record().firstEventId()) < 0)) {
            notPossible = ResumeReason.since_unknown;
        }
        boolean adopt = found != null && notPossible == null;
        log.info(
                "resume of {}: record {}, window {} s, now {}, adopt {}, not possible {}",
                recordKey,
                found == null ? "none" : found.record(),
                window,
                now,
                adopt,
                notPossible);
        Map<String, String> ids = adopt ? adopted(found.record()) : fresh();
        ResumeRecord base = adopt
                ? found.record()
                : new ResumeRecord(sorted(ids), null, null, now, 0, window, 0, null, identity.claimsDigest());
        ResumeRecord mine = base.ownedBy(owner.instanceId, now, window);
        long revision;
        try {
            revision = store.claim(projectId, recordKey, mine, found == null ? 0 : found.revision(), pointerKey);
        } catch (ResumeStore.Lost lost) {
            log.info("resume of {}: claim lost ({})", recordKey, lost.getMessage());
            // another channel claimed it first (a second tab): fresh sub ids, nothing resumed or written
            return Plan.fresh(fresh(), null);
        } catch (ResumeStore.Refused refused) {
            // over the project's share, or the bucket full: no record, so the client is told now
            // (issue 38: a refused claim is not a second tab)
            log.info("resume of {}: claim refused ({})", recordKey, refused.getMessage());
            return Plan.fresh(fresh(), refused.reason());
        } catch (Exception e) {
            throw new CompletionException(e);
        }
        String after = adopt ? (since != null ? since : found.record().lastEventId()) : null;
        return new Plan(ids, mine, revision, adopt ? found.record() : null, adopt, after, notPossible);
    }

    /**
     * The join claimed the record but does not go on (superseded by a later join of the topic, or
     * its socket closed before it was registered): an adopted record is put back as it was (parked
     * as before, resumable by the next rejoin), a new one deleted; either only if nobody wrote it since.
     */
    public void abandon() {
        if (plan == null || !plan.isDone()) {
            return;
        }
        Plan p = plan.join();
        if (p.claimed() == null) {
            return;
        }
        ResumeStore store = resumes.store();
        if (p.previous() == null) {
            store.deleteIfUnchanged(projectId, recordKey, p.revision());
            return;
        }
        ResumeRecord previous = p.previous();
        store.put(projectId, recordKey, previous)
                .thenAccept(revision ->
                        store.parked(projectId, recordKey, revision, pointerKey, 0, previous.resumableUntilMs()));
    }

    /** Whether the slot lost changes after {@code lastEventId} (a gap this replica heard of ends at or after it). */
    private boolean lost(String lastEventId) {
        String gapTo = owner.cdc.lastGapTo();
        if (gapTo == null || lastEventId == null || lastEventId.indexOf(':') <= 0) {
            return false;
        }
        try {
            return Lsn.parse(lastEventId.substring(0, lastEventId.indexOf(':'))).compareTo(Lsn.parse(gapTo)) <= 0;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** The record's sub ids by canonical binding: it lists them in the sorted canonical order. */
    private Map<String, String> adopted(ResumeRecord r) {
        List<String> sorted = new ArrayList<>(canonical);
        sorted.sort(null);
        Map<String, String> ids = new LinkedHashMap<>();
        for (String c : canonical) {
            ids.put(c, r.subIds().get(sorted.indexOf(c)));
        }
        return ids;
    }

    /** Until when a record may be resumed: its window after parking, or after its owner's last write. */
    private long until(ResumeRecord r) {
        long w = Math.min(r.windowSeconds(), window) * 1000L;
        return (r.parkedAtMs() > 0 ? r.parkedAtMs() : r.updatedAtMs()) + w;
    }

    /** The sub id of the {@code i}-th distinct binding. */
    public String subId(Plan p, int i) {
        return p.subIds().get(canonical.get(i));
    }

    /** Gives the channel its tracker before it goes live; holds live changes when it adopts. */
    public void attach(ResumableChannel m, Plan p) {
        if (p.claimed() == null && !p.adopted()) {
            return; // resume off, or another channel owns the record: nothing to track
        }
        List<String> ordered = new ArrayList<>();
        List<String> sorted = new ArrayList<>(canonical);
        sorted.sort(null);
        for (String c : sorted) {
            ordered.add(p.subIds().get(c));
        }
        ResumeRecord claimed = p.claimed() == null
                ? null
                : new ResumeRecord(
                        ordered,
                        p.claimed().lastEventId(),
                        p.claimed().owner(),
                        p.claimed().updatedAtMs(),
                        0,
                        window,
                        0,
                        p.claimed().firstEventId(),
                        p.claimed().claimsDigest());
        ResumeTracker tracker =
                new ResumeTracker(resumes.store(), projectId, recordKey, pointerKey, claimed, m, owner.clock);
        if (p.adopted()) {
            tracker.gate(new ReplayGate(resumes.replayBufferBytes(), resumes.heldBytes()));
        }
        m.resume().attach(tracker, identity);
        tracker.start();
    }

    /** After "Subscribed to PostgreSQL": the replay, or the reason it is not possible. */
    public void afterSubscribed(ResumableChannel m, Plan p) {
        if (p.notPossible() != null) {
            owner.notPossible(m, p.notPossible());
            return;
        }
        ResumeTracker tracker = m.resume().tracker();
        if (!p.adopted() || tracker == null || tracker.gate() == null) {
            return;
        }
        new ResumeReplay(owner, m, tracker)
                .start(projectId, p.replayAfter(), new HashSet<>(p.subIds().values()));
    }
}
