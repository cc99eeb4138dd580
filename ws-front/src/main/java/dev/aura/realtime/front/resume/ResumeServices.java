package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.relay.ProjectLimitsSource;
import java.time.Duration;

/**
 * What postgres_changes resume needs (docs/design.md R): the records, the history reader, the owners'
 * liveness, each project's window and history bound, and the byte bound of a channel's live changes held during a
 * replay.
 *
 * @param replayBufferBytes most bytes of live changes held per channel while its history is replayed
 * @param liveness asks a record's owner whether the record's channel is still live there
 */
public record ResumeServices(
        ResumeStore store,
        HistoryReader history,
        ProjectLimitsSource limits,
        long replayBufferBytes,
        ResumeLiveness liveness) {

    /**
     * The longest a parked registry entry lives in the registry bucket after its last write, and
     * so the longest a resume can span: the bucket's max age less one refresh period (a replica
     * that died wrote its entries at most one period before). Windows above it are capped.
     */
    public static final Duration MAX_WINDOW = SubscriptionEntry.MAX_AGE.minus(SubscriptionEntry.REFRESH_INTERVAL);

    /** The project's resume window in seconds, capped at {@link #MAX_WINDOW}; 0 when off. */
    public int windowSeconds(String projectId) {
        ProjectLimits l = limits.overrides(projectId);
        int w = l == null ? 0 : l.resumeSeconds();
        return (int) Math.min(w, MAX_WINDOW.toSeconds());
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
