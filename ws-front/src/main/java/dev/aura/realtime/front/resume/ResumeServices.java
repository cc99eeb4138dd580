package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.relay.ProjectLimitsSource;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * What postgres_changes resume needs (docs/design.md R): the records, the history reader, the owners'
 * liveness, each project's window and history bound, and the byte bound of a channel's live changes held during a
 * replay.
 *
 * @param replayBufferBytes most bytes of live changes held per channel while its history is replayed
 * @param liveness asks a record's owner whether the record's channel is still live there
 * @param registryMaxAge the registry bucket's max age in force (the cdc-worker sets it from the
 *     longest window, docs/design.md R)
 * @param heldBytes the live changes all channels of the replica hold while their histories are replayed
 */
public record ResumeServices(
        ResumeStore store,
        HistoryReader history,
        ProjectLimitsSource limits,
        long replayBufferBytes,
        ResumeLiveness liveness,
        Supplier<Duration> registryMaxAge,
        HeldBytes heldBytes) {

    /**
     * The longest a resume can span now: a parked registry entry lives the bucket's max age after
     * its last write, and a replica that died wrote its entries at most one refresh before
     * ({@link SubscriptionEntry#longestWindowWithin}). A project's window above it is capped.
     */
    public int maxWindowSeconds() {
        return SubscriptionEntry.longestWindowWithin(registryMaxAge.get());
    }

    /** The project's resume window in seconds, capped at {@link #maxWindowSeconds}; 0 when off. */
    public int windowSeconds(String projectId) {
        ProjectLimits l = limits.overrides(projectId);
        int w = l == null ? 0 : l.resumeSeconds();
        return Math.min(w, maxWindowSeconds());
    }

    /**
     * The window once the project's limits are known, waiting up to {@code waitMs} for the first
     * answer (a replica's first join of a project; blocking: call on a virtual thread).
     */
    public int windowSecondsAwaited(String projectId, long waitMs) throws InterruptedException {
        long deadline = System.nanoTime() + waitMs * 1_000_000;
        while (!limits.known(projectId) && windowSeconds(projectId) == 0 && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        // read after known(): an answer is stored before known() turns true, so this is the answer's
        return windowSeconds(projectId);
    }

    public long historyBytes(String projectId) {
        ProjectLimits l = limits.overrides(projectId);
        return l == null ? ProjectLimits.DEFAULT_HISTORY_BYTES : l.historyBytes();
    }
}
