package dev.aura.realtime.front.relay;

import java.util.Iterator;
import java.util.LinkedHashSet;

/**
 * The change events this replica has relayed recently, to drop re-published copies
 * (docs/design.md C4, D3). The cdc-worker delivers at least once: a batch whose flush or slot
 * advance failed, or that a new leader reads again, is published again with the same
 * {@code Aura-Event-Id}, and without this every client would get those changes twice.
 *
 * <p>A key is the subject and the event id together: ids are {@code <commit LSN>:<ordinal>}
 * (plus a view suffix), unique within one Postgres cluster, and separate CDC sources (dedicated
 * clusters) have LSNs of their own; their projects, and so their subjects, differ.
 *
 * <p>Bounded in entries and in bytes, the oldest forgotten first: a copy re-published after more
 * than {@code maxEntries} newer events (or their bytes) passed is delivered again. Re-publishes
 * come within seconds of the original (the failed batch is re-read at once; a takeover re-reads
 * within the lease duration), so the default window of 100,000 events covers them up to that
 * event rate per second.
 *
 * <p>Not thread-safe: the relay's one dispatcher thread calls it.
 */
final class EventIdWindow {
    /** Estimated heap of one remembered key beyond its characters: String, array and set node headers. */
    static final int ENTRY_OVERHEAD_BYTES = 96;

    private final int maxEntries;
    private final long maxBytes;
    private final LinkedHashSet<String> keys = new LinkedHashSet<>();
    private long bytes;

    /**
     * @param maxEntries most keys remembered; 0 turns duplicate dropping off
     * @param maxBytes most estimated bytes of remembered keys
     */
    EventIdWindow(int maxEntries, long maxBytes) {
        this.maxEntries = maxEntries;
        this.maxBytes = maxBytes;
    }

    /** True when this (subject, event id) was not seen within the window; remembers it. */
    boolean firstSighting(String subject, String eventId) {
        if (maxEntries == 0) {
            return true;
        }
        String key = subject + ' ' + eventId;
        if (!keys.add(key)) {
            return false;
        }
        bytes += cost(key);
        Iterator<String> oldest = keys.iterator();
        while (keys.size() > maxEntries || (bytes > maxBytes && keys.size() > 1)) {
            bytes -= cost(oldest.next());
            oldest.remove();
        }
        return true;
    }

    int size() {
        return keys.size();
    }

    long bytes() {
        return bytes;
    }

    private static long cost(String key) {
        return ENTRY_OVERHEAD_BYTES + 2L * key.length();
    }
}
