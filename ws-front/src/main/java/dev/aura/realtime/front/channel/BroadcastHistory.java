package dev.aura.realtime.front.channel;

import dev.aura.realtime.front.protocol.UserBroadcast;
import java.util.ArrayList;
import java.util.List;

/**
 * The last {@code capacity} broadcasts of one channel with their arrival time, for
 * {@code broadcast.replay} and SSE {@code Last-Event-ID} (served in a later round).
 * Thread-safe (relay thread and event loops append).
 */
public final class BroadcastHistory {
    /** One remembered broadcast; {@code atMs} is this replica's receive time, epoch ms. */
    public record Entry(UserBroadcast message, long atMs) {}

    private final Entry[] ring;
    private int next;
    private int size;

    public BroadcastHistory(int capacity) {
        this.ring = new Entry[capacity];
    }

    public synchronized void add(UserBroadcast message, long atMs) {
        if (ring.length == 0) {
            return;
        }
        ring[next] = new Entry(message, atMs);
        next = (next + 1) % ring.length;
        size = Math.min(size + 1, ring.length);
    }

    /** Entries received at or after {@code sinceMs}, oldest first, at most {@code limit}. */
    public synchronized List<Entry> since(long sinceMs, int limit) {
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            Entry e = ring[(next - size + i + ring.length) % ring.length];
            if (e.atMs() >= sinceMs) {
                out.add(e);
            }
        }
        return out.size() > limit ? out.subList(out.size() - limit, out.size()) : out;
    }
}
