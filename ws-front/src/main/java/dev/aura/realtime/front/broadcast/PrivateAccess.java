package dev.aura.realtime.front.broadcast;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What one channel may read and write (docs/design.md H1): the result of its read check (broadcast
 * and presence read, volatile: the fan-out reads them; both true on a public channel) and, per
 * extension, the cached result of its write check with the client events waiting for the first
 * one (event loop only).
 */
public final class PrivateAccess {
    private volatile boolean readBroadcast = true;
    private volatile boolean readPresence = true;
    /** Write check results by extension (event loop only); absent = not checked yet. */
    private final Map<String, Boolean> writes = new HashMap<>();
    /** Client events waiting for the first write check of their extension (event loop only). */
    private final Map<String, List<Runnable>> waiting = new HashMap<>();
    /** Bytes of the client events waiting for write checks (event loop only). */
    private long waitingBytes;

    public boolean readsBroadcast() {
        return readBroadcast;
    }

    public boolean readsPresence() {
        return readPresence;
    }

    /** Records a read check's result (at join and after a token refresh). */
    public void read(boolean broadcast, boolean presence) {
        this.readBroadcast = broadcast;
        this.readPresence = presence;
    }

    /** The cached write check of {@code extension}: null when not checked yet. Event loop only. */
    Boolean write(String extension) {
        return writes.get(extension);
    }

    /** Caches a write check; null forgets it (a new token). Event loop only. */
    void write(String extension, Boolean allowed) {
        if (allowed == null) {
            writes.remove(extension);
        } else {
            writes.put(extension, allowed);
        }
    }

    /**
     * Queues a client event until the first write check of {@code extension} is answered.
     *
     * @param bytes the event's payload size, counted against {@code maxWaitingBytes}
     * @return 1 when this is the first waiting event (the caller starts the check), 0 when queued
     *     behind others, -1 when refused because the queue would exceed {@code maxWaitingBytes}
     */
    int awaitWrite(String extension, Runnable event, int bytes, long maxWaitingBytes) {
        if (waitingBytes + bytes > maxWaitingBytes) {
            return -1;
        }
        waitingBytes += bytes;
        List<Runnable> queue = waiting.computeIfAbsent(extension, k -> new ArrayList<>());
        queue.add(event);
        return queue.size() == 1 ? 1 : 0;
    }

    /** Events queued behind a write check, which the caller now runs. Event loop only. */
    List<Runnable> takeWaiting(String extension) {
        List<Runnable> queue = waiting.remove(extension);
        if (waiting.isEmpty()) {
            waitingBytes = 0;
        }
        return queue == null ? List.of() : queue;
    }
}
