package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.ResumeRecord;
import dev.aura.realtime.front.log.LogCode;
import io.netty.channel.EventLoop;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The resume record of one resumable channel (docs/design.md R): after change frames reached the
 * socket ({@link ResumableChannel#writeBarrier}) it writes the newest event id, coalesced (at most one
 * put in flight; the next one, carrying the newest id, starts as soon as the previous is
 * acknowledged, with no timer: after a kill at most one put's round trip of frames is re-sent); it re-writes the record
 * and its pointer every {@link #REFRESH_MS} so a replica's death is dated and neither outlives the
 * bucket's max age; parks both when the socket closes (deleted {@link ResumeStore#MARGIN} after the
 * window unless adopted meanwhile), deletes them on an explicit leave. While a replay runs, its
 * {@link ReplayGate} holds the live changes.
 *
 * <p>Threads: event loop only, except {@link #hold} (the relay's thread).
 */
final class ResumeTracker {
    private static final Logger log = LoggerFactory.getLogger(ResumeTracker.class);
    /** How often a live channel's record is re-written (as the registry entries are). */
    static final long REFRESH_MS = 30_000;

    private final ResumeStore store;
    private final String projectId;
    private final String key;
    private final String pointerKey;
    /** The revision of this tracker's last pointer write (0: none acknowledged yet). */
    private volatile long pointerRevision;

    private final ResumableChannel channel;
    private final Clock clock;
    private volatile ReplayGate gate;
    private ResumeRecord record;
    private String newest;
    private boolean inFlight;
    private boolean closed;
    private ScheduledFuture<?> refresh;
    /** A replay waiting for its chunk's last frame to be written ({@link #writtenThrough}); event loop only. */
    private CompletableFuture<Void> waiting;

    private String waitingFor;

    /** @param record the claimed record; null when another channel owns it (nothing is written) */
    ResumeTracker(
            ResumeStore store,
            String projectId,
            String key,
            String pointerKey,
            ResumeRecord record,
            ResumableChannel channel,
            Clock clock) {
        this.store = store;
        this.projectId = projectId;
        this.key = key;
        this.pointerKey = pointerKey;
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

    /** Writes the pointer, starts the periodic re-write. */
    void start() {
        if (record == null) {
            return;
        }
        writePointer();
        EventLoop loop = channel.recipient().eventLoop();
        refresh = loop.scheduleAtFixedRate(this::refreshNow, REFRESH_MS, REFRESH_MS, TimeUnit.MILLISECONDS);
    }

    /**
     * Completes once a change frame with {@code eventId} or a later one was written to the channel
     * (a replayed chunk's last); fails when the channel closes first. Event loop only.
     */
    CompletableFuture<Void> writtenThrough(String eventId) {
        CompletableFuture<Void> f = new CompletableFuture<>();
        String written = channel.resume().lastWritten();
        if (closed) {
            f.completeExceptionally(new IllegalStateException("channel closed"));
        } else if (written != null && !EventIds.after(eventId, written)) {
            f.complete(null);
        } else {
            if (waiting != null) {
                waiting.completeExceptionally(new IllegalStateException("replaced"));
            }
            waiting = f;
            waitingFor = eventId;
        }
        return f;
    }

    /** A change frame with this id was written (not yet necessarily on the socket). */
    void written(String eventId) {
        CompletableFuture<Void> w = waiting;
        if (w != null && !EventIds.after(waitingFor, eventId)) {
            waiting = null;
            w.complete(null);
        }
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
        store.put(projectId, key, record)
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
        store.put(projectId, key, record);
        writePointer();
    }

    private void writePointer() {
        store.putPointer(projectId, pointerKey, key).thenAccept(revision -> pointerRevision = revision);
    }

    /** A later token of the same identity carries other claims: the record names their digest. */
    void claims(String digest) {
        if (record == null || closed) {
            return;
        }
        record = record.withClaimsDigest(digest);
        store.put(projectId, key, record);
    }

    /** The socket closed (or the channel was re-joined): the record says when, for the window. */
    void park() {
        stop();
        if (record == null) {
            return;
        }
        ResumeRecord parked = record.parked(clock.millis());
        store.put(projectId, key, parked)
                .thenAcceptBoth(
                        store.putPointer(projectId, pointerKey, key),
                        (revision, pointer) ->
                                store.parked(projectId, key, revision, pointerKey, pointer, parked.resumableUntilMs()))
                .exceptionally(e -> {
                    LogCode.RegistryPutFailed.warn(
                            log, "parking the resume record of {}: {}", channel.recipient(), e.toString());
                    store.parked(projectId, key, 0, pointerKey, 0, parked.resumableUntilMs()); // uncharged then
                    return null;
                });
    }

    /** An explicit leave: the record and its pointer (unless another record's since) are deleted. */
    void forget() {
        stop();
        if (record != null) {
            store.delete(projectId, key);
            store.deleteIfUnchanged(projectId, pointerKey, pointerRevision);
        }
    }

    private void stop() {
        closed = true;
        if (waiting != null) {
            waiting.completeExceptionally(new IllegalStateException("channel closed"));
            waiting = null;
        }
        if (refresh != null) {
            refresh.cancel(false);
        }
        ReplayGate g = gate;
        if (g != null) {
            g.abandon();
        }
    }
}
