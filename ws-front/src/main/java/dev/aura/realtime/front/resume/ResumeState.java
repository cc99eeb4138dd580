package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.ChangeEvent;

/**
 * What resume keeps in one channel (docs/design.md R): its {@link ResumeTracker} while the channel
 * is resumable, the identity the tracked record is keyed by, whether a resume started by an
 * {@code access_token} is being claimed, and the newest change written to the channel (a resume
 * started later begins after it). The tracker and the newest change are read from the relay's
 * thread; the rest is event loop only.
 */
public final class ResumeState {
    private final String resumeKey;
    private volatile ResumeTracker tracker;
    private volatile String lastWritten;
    private ResumeKeys.Identity identity;
    private boolean starting;

    /** @param resumeKey the join's {@code postgres_changes_options.resume_key}, or null */
    public ResumeState(String resumeKey) {
        this.resumeKey = resumeKey;
    }

    /** The join's {@code postgres_changes_options.resume_key}, or null (an identity for a token without sub). */
    String resumeKey() {
        return resumeKey;
    }

    ResumeTracker tracker() {
        return tracker;
    }

    /** The identity the tracked record is keyed by, or null. */
    ResumeKeys.Identity identity() {
        return identity;
    }

    void attach(ResumeTracker t, ResumeKeys.Identity id) {
        this.tracker = t;
        this.identity = id;
    }

    void detach() {
        this.tracker = null;
        this.identity = null;
    }

    boolean starting() {
        return starting;
    }

    void starting(boolean on) {
        this.starting = on;
    }

    String lastWritten() {
        return lastWritten;
    }

    /** Whether the channel has a resume record (closing it parks or deletes the record). */
    public boolean tracking() {
        return tracker != null;
    }

    /**
     * Whether a change must not be delivered now: held during a replay, or a live copy of a change
     * the replay already sent. Relay thread.
     */
    public boolean hold(ChangeEvent event) {
        ResumeTracker t = tracker;
        return t != null && t.hold(event);
    }

    /** A change frame with this event id was written to the channel. Event loop only. */
    public void written(String eventId) {
        lastWritten = eventId;
        ResumeTracker t = tracker;
        if (t != null) {
            t.written(eventId);
        }
    }

    /**
     * The channel closed: its record is parked for the project's window when {@code park} (the
     * socket closed, or the channel is joined again), else deleted (an explicit leave).
     */
    public void close(boolean park) {
        ResumeTracker t = tracker;
        if (t == null) {
            return;
        }
        if (park) {
            t.park();
        } else {
            t.forget();
        }
    }
}
