package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.ResumeRecord;
import dev.aura.realtime.front.log.LogCode;
import io.netty.channel.EventLoop;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resume record of one resumable channel (docs/design.md R): after change frames reached the
 * socket ({@link ResumableChannel#writeBarrier}) it writes the newest event id, coalesced (at most one
 * put in flight; the next one, carrying the newest id, starts as soon as the previous is
 * acknowledged, with no timer: after a kill at most one put's round trip of frames is re-sent); it re-writes the record every
 * {@link #REFRESH_MS} so a replica's death is dated; parks it when the socket closes, deletes it
 * on an explicit leave. While a replay runs, its {@link ReplayGate} holds the live changes.
 *
 * <p>Threads: event loop only, except {@link #hold} (the relay's thread).
 */
final class ResumeTracker {
    private static final Logger log = LoggerFactory.getLogger(ResumeTracker.class);
    /** How often a live channel's record is re-written (as the registry entries are). */
    static final long REFRESH_MS = 30_000;

    private final ResumeStore store;
    private final String key;
    private final ResumableChannel channel;
    private final Clock clock;
    private volatile ReplayGate gate;
    private ResumeRecord record;
    private String newest;
    private boolean inFlight;
    private boolean closed;
    private ScheduledFuture<?> refresh;

    /** @param record the claimed record; null when another channel owns it (nothing is written) */
    ResumeTracker(ResumeStore store, String key, ResumeRecord record, ResumableChannel channel, Clock clock) {
        this.store = store;
        this.key = key;
        this.record = record;
        this.channel = channel;
        this.clock = clock;
    }

    void gate(ReplayGate g) {
        this.gate = g;
    }

    ReplayGate gate() {
        return gate;
    }

    /** Whether a replay is still holding the live changes. */
    boolean replaying() {
        ReplayGate g = gate;
        return g != null && g.holding();
    }

    boolean hold(ChangeEvent e) {
        ReplayGate g = gate;
        return g != null && g.hold(e);
    }

    /** Starts the periodic re-write. */
    void start() {
        if (record == null) {
            return;
        }
        EventLoop loop = channel.recipient().eventLoop();
        refresh = loop.scheduleAtFixedRate(this::refreshNow, REFRESH_MS, REFRESH_MS, TimeUnit.MILLISECONDS);
    }

    /** A change frame with this id was written (not yet necessarily on the socket). */
    void written(String eventId) {
        if (record == null || closed) {
            return;
        }
        newest = eventId;
        if (inFlight) {
            return;
        }
        inFlight = true;
        channel.writeBarrier().addListener(f -> {
            if (!f.isSuccess()) {
                inFlight = false; // the socket closed: what was not written must not be recorded
                return;
            }
            putNewest();
        });
    }

    private void putNewest() {
        if (closed) {
            inFlight = false;
            return;
        }
        String id = newest;
        record = record.withLastEventId(id, clock.millis());
        store.put(key, record)
                .whenComplete((v, e) -> channel.recipient().eventLoop().execute(() -> {
                    inFlight = false;
                    if (e != null) {
                        LogCode.RegistryPutFailed.warn(
                                log, "resume record of {}: {}", channel.recipient(), e.toString());
                    }
                    if (!closed && !Objects.equals(newest, id)) {
                        written(newest);
                    }
                }));
    }

    private void refreshNow() {
        if (closed || inFlight || record == null) {
            return;
        }
        record = record.ownedBy(record.owner(), clock.millis(), record.windowSeconds());
        store.put(key, record);
    }

    /** A later token of the same identity carries other claims: the record names their digest. */
    void claims(String digest) {
        if (record == null || closed) {
            return;
        }
        record = record.withClaimsDigest(digest);
        store.put(key, record);
    }

    /** The socket closed (or the channel was re-joined): the record says when, for the window. */
    void park() {
        stop();
        if (record != null) {
            store.put(key, record.parked(clock.millis()));
        }
    }

    /** An explicit leave: the record is deleted. */
    void forget() {
        stop();
        if (record != null) {
            store.delete(key);
        }
    }

    private void stop() {
        closed = true;
        if (refresh != null) {
            refresh.cancel(false);
        }
        ReplayGate g = gate;
        if (g != null) {
            g.abandon();
        }
    }
}
