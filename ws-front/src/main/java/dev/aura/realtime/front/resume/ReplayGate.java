package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.ChangeEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * The seam between a resumed channel's replay and its live changes (docs/design.md R). While the
 * history is read, live changes for the channel are {@link #hold held} here, bounded in bytes (over
 * the bound, or past what the replica's resuming channels may hold together ({@link HeldBytes}),
 * the resume fails with {@link ResumeReason#buffer_overflow} rather than using unbounded memory). {@link #goLive} then returns the held changes not already replayed, and from then on
 * {@link #hold} only drops live copies of what was already sent (ids at or before the seam: a
 * project's changes are published in id order, so a live change at or before the last sent one
 * is a copy still in flight).
 *
 * <p>Threads: {@link #hold} on the relay's dispatcher, the rest on the channel's event loop; all synchronised.
 */
public final class ReplayGate {
    private final long maxBytes;
    private final HeldBytes shared;
    private List<ChangeEvent> buffer = new ArrayList<>();
    private long bytes;
    private boolean overflow;
    private String seam;

    /** @param maxBytes most bytes of live changes held during the replay */
    public ReplayGate(long maxBytes) {
        this(maxBytes, new HeldBytes(Long.MAX_VALUE));
    }

    /**
     * @param maxBytes most bytes of live changes this channel holds during the replay
     * @param shared what all resuming channels of the replica hold
     */
    public ReplayGate(long maxBytes, HeldBytes shared) {
        this.maxBytes = maxBytes;
        this.shared = shared;
    }

    /**
     * @return true when the change must not be delivered now (held, or a copy of a sent one)
     */
    public synchronized boolean hold(ChangeEvent e) {
        if (buffer != null) {
            if (!overflow) {
                long size =
                        256 + dev.aura.realtime.common.wire.WireJson.toBytes(e.data()).length; // the held heap, roughly
                if (bytes + size > maxBytes || !shared.take(size)) {
                    overflow = true;
                    buffer.clear();
                    shared.give(bytes);
                    bytes = 0;
                } else {
                    buffer.add(e);
                    bytes += size;
                }
            }
            return true;
        }
        return seam != null && !EventIds.after(e.eventId(), seam);
    }

    public synchronized boolean overflowed() {
        return overflow;
    }

    /**
     * Ends the replay: the held changes after {@code lastReplayed} (every held one when null), in
     * event id order, without duplicates; later live changes at or before the last of all these are dropped.
     */
    public synchronized List<ChangeEvent> goLive(String lastReplayed) {
        List<ChangeEvent> out = new ArrayList<>();
        goLive(lastReplayed, out::add);
        return out;
    }

    /**
     * Ends the replay as {@link #goLive(String)} does, handing each held change to {@code deliver}
     * while still holding: a live change that arrives meanwhile waits for the lock and is judged
     * against the seam only after every held change was handed on, so it can never overtake one
     * of them (the deliveries only queue writes, they do not block).
     *
     * @return whether the held changes overflowed the bound (then none was handed on)
     */
    public synchronized boolean goLive(String lastReplayed, Consumer<ChangeEvent> deliver) {
        String last = lastReplayed;
        List<ChangeEvent> held = buffer;
        buffer = null;
        shared.give(bytes);
        bytes = 0;
        if (held != null && !overflow) {
            held.sort((a, b) -> EventIds.compare(a.eventId(), b.eventId())); // stable: arrival order among equals
            for (ChangeEvent e : held) {
                if (EventIds.after(e.eventId(), last)) {
                    deliver.accept(e);
                    last = e.eventId();
                }
            }
        }
        seam = last;
        return overflow;
    }

    /** Whether live changes are still held (the replay has not gone live). */
    public synchronized boolean holding() {
        return buffer != null;
    }

    /** Stops holding without delivering anything (the resume failed or the channel closed). */
    public synchronized void abandon() {
        buffer = null;
        seam = null;
        shared.give(bytes);
        bytes = 0;
    }

    /** Merges a replay and what was held: the replayed changes, then the held ones after them. Pure (tests). */
    public static List<ChangeEvent> merge(List<ChangeEvent> replayed, List<ChangeEvent> held) {
        ReplayGate g = new ReplayGate(Long.MAX_VALUE);
        held.forEach(g::hold);
        List<ChangeEvent> out = new ArrayList<>(replayed);
        out.addAll(g.goLive(
                replayed.isEmpty() ? null : replayed.get(replayed.size() - 1).eventId()));
        return out;
    }
}
