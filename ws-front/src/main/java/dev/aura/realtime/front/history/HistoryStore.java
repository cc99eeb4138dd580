package dev.aura.realtime.front.history;

import dev.aura.realtime.front.protocol.UserBroadcast;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The broadcast history of every channel this replica has seen a broadcast of, local or relayed
 * from NATS (every replica receives every broadcast, so every replica holds the same history
 * and a client may replay on any of them). Serves {@code broadcast.replay} at join and SSE
 * {@code Last-Event-ID}.
 *
 * <p>History outlives the channel's last local member (a client that reconnects to another
 * replica, or rejoins after a network cut, must find it), so memory is bounded independently of
 * membership: at most {@code perChannel} messages per channel, at most {@code maxChannels}
 * channels and {@code maxBytes} payload bytes in all (the channels whose last message is oldest
 * go first), and a channel without a new message for {@code ttlMs} is forgotten.
 *
 * <p>Each project has its own share, {@code maxChannelsPerProject} channels and
 * {@code maxBytesPerProject} bytes: a project over its share loses its own stalest channels, so
 * one tenant broadcasting on 10,000 topics cannot push another tenant's history out. The global
 * bounds stay as the replica's memory bound (many projects each inside their share can still
 * fill it; then the stalest channels of any project go first).
 *
 * <p>Thread-safe: one lock; the NATS dispatcher and event loops add, joins read.
 */
public final class HistoryStore {
    /** Per-entry overhead counted against {@code maxBytes} besides payload and event name. */
    private static final int ENTRY_OVERHEAD = 96;

    /**
     * One remembered broadcast.
     *
     * @param message the broadcast with its id
     * @param atMs the sender's timestamp (from the id), epoch ms
     */
    public record Entry(UserBroadcast message, long atMs) {}

    private record Key(String projectId, String channel) {}

    private static final class Ring {
        final ArrayDeque<Entry> entries = new ArrayDeque<>();
        long bytes;
        long lastAddMs;
    }

    /** One project's channels, in the order of their last add (eldest first), and their bytes. */
    private static final class Share {
        final LinkedHashMap<Key, Ring> rings = new LinkedHashMap<>();
        long bytes;
    }

    private final int perChannel;
    private final int maxChannels;
    private final long maxBytes;
    private final long ttlMs;
    private final int maxChannelsPerProject;
    private final long maxBytesPerProject;
    private final Map<String, Share> shares = new HashMap<>();
    /** Insertion order = order of each channel's last add, so the eldest is the stalest. */
    private final LinkedHashMap<Key, Ring> rings = new LinkedHashMap<>();

    private long totalBytes;

    /**
     * @param perChannel messages kept per channel ({@code HISTORY_SIZE}); 0 disables history
     * @param maxChannels channels kept ({@code HISTORY_MAX_CHANNELS})
     * @param maxBytes payload bytes kept in all ({@code HISTORY_MAX_BYTES})
     * @param ttlMs a channel without a new message for this long is dropped ({@code HISTORY_TTL_SECONDS})
     * @param maxChannelsPerProject channels kept per project ({@code HISTORY_MAX_CHANNELS_PER_PROJECT})
     * @param maxBytesPerProject payload bytes kept per project ({@code HISTORY_MAX_BYTES_PER_PROJECT})
     */
    public HistoryStore(
            int perChannel,
            int maxChannels,
            long maxBytes,
            long ttlMs,
            int maxChannelsPerProject,
            long maxBytesPerProject) {
        this.perChannel = perChannel;
        this.maxChannels = maxChannels;
        this.maxBytes = maxBytes;
        this.ttlMs = ttlMs;
        this.maxChannelsPerProject = maxChannelsPerProject;
        this.maxBytesPerProject = maxBytesPerProject;
    }

    /** {@code HISTORY_SIZE}: messages kept per channel (0: history is off). */
    public int perChannel() {
        return perChannel;
    }

    /** Records a broadcast; {@code nowMs} is this replica's clock (TTL, and the timestamp of an id without one). */
    public void add(String projectId, String channel, UserBroadcast message, long nowMs) {
        if (perChannel == 0 || message.id() == null) {
            return;
        }
        Entry entry = new Entry(message, MessageIds.timestampOf(message.id(), nowMs));
        long size = sizeOf(message);
        synchronized (this) {
            Key key = new Key(projectId, channel);
            Share share = shares.computeIfAbsent(projectId, p -> new Share());
            Ring ring = rings.remove(key); // re-inserted last: most recently added
            if (ring == null) {
                ring = new Ring();
            }
            rings.put(key, ring);
            share.rings.remove(key);
            share.rings.put(key, ring);
            ring.entries.addLast(entry);
            ring.bytes += size;
            share.bytes += size;
            totalBytes += size;
            ring.lastAddMs = nowMs;
            // a channel alone never holds more than its project's share, except its newest message
            while (ring.entries.size() > perChannel || (ring.entries.size() > 1 && ring.bytes > maxBytesPerProject)) {
                long removed = sizeOf(ring.entries.removeFirst().message());
                ring.bytes -= removed;
                share.bytes -= removed;
                totalBytes -= removed;
            }
            evictWithin(share);
            evict(nowMs);
        }
    }

    /** Entries sent at or after {@code sinceMs}, oldest first, the newest {@code limit} of them. */
    public List<Entry> since(String projectId, String channel, long sinceMs, int limit, long nowMs) {
        List<Entry> out = new ArrayList<>();
        synchronized (this) {
            Ring ring = live(new Key(projectId, channel), nowMs);
            if (ring == null) {
                return out;
            }
            for (Entry e : ring.entries) {
                if (e.atMs() >= sinceMs) {
                    out.add(e);
                }
            }
        }
        return out.size() > limit ? new ArrayList<>(out.subList(out.size() - limit, out.size())) : out;
    }

    /**
     * The entries after the one with id {@code lastId}, oldest first.
     *
     * @return empty when {@code lastId} is no longer (or was never) in this channel's history:
     *     the caller cannot know what was missed and must say so
     */
    public Optional<List<Entry>> after(String projectId, String channel, String lastId, long nowMs) {
        synchronized (this) {
            Ring ring = live(new Key(projectId, channel), nowMs);
            if (ring == null) {
                return Optional.empty();
            }
            List<Entry> out = null;
            for (Entry e : ring.entries) {
                if (out != null) {
                    out.add(e);
                } else if (lastId.equals(e.message().id())) {
                    out = new ArrayList<>();
                }
            }
            return Optional.ofNullable(out);
        }
    }

    /** Channels currently remembered. */
    public synchronized int channels() {
        return rings.size();
    }

    /** Bytes currently accounted. */
    public synchronized long bytes() {
        return totalBytes;
    }

    /** Channels currently remembered for {@code projectId}. */
    public synchronized int channels(String projectId) {
        Share share = shares.get(projectId);
        return share == null ? 0 : share.rings.size();
    }

    /** Bytes currently accounted to {@code projectId}. */
    public synchronized long bytes(String projectId) {
        Share share = shares.get(projectId);
        return share == null ? 0 : share.bytes;
    }

    private Ring live(Key key, long nowMs) {
        Ring ring = rings.get(key);
        if (ring != null && nowMs - ring.lastAddMs > ttlMs) {
            drop(key, ring);
            return null;
        }
        return ring;
    }

    /** Drops the project's stalest channels while it is over its share, never the one just written to. */
    private void evictWithin(Share share) {
        Iterator<Map.Entry<Key, Ring>> it = share.rings.entrySet().iterator();
        while (share.rings.size() > 1
                && (share.rings.size() > maxChannelsPerProject || share.bytes > maxBytesPerProject)) {
            Map.Entry<Key, Ring> eldest = it.next();
            it.remove();
            rings.remove(eldest.getKey());
            share.bytes -= eldest.getValue().bytes;
            totalBytes -= eldest.getValue().bytes;
        }
    }

    private void evict(long nowMs) {
        Iterator<Map.Entry<Key, Ring>> it = rings.entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Key, Ring> eldest = it.next();
            boolean stale = nowMs - eldest.getValue().lastAddMs > ttlMs;
            if (!stale && rings.size() <= maxChannels && totalBytes <= maxBytes) {
                return;
            }
            if (rings.size() == 1 && !stale) {
                return; // never evict the channel just written to for the byte budget alone
            }
            it.remove();
            forget(eldest.getKey(), eldest.getValue());
        }
    }

    private void drop(Key key, Ring ring) {
        rings.remove(key);
        forget(key, ring);
    }

    /** Accounts a ring already removed from {@link #rings}: total bytes and its project's share. */
    private void forget(Key key, Ring ring) {
        totalBytes -= ring.bytes;
        Share share = shares.get(key.projectId());
        if (share != null && share.rings.remove(key) != null) {
            share.bytes -= ring.bytes;
            if (share.rings.isEmpty()) {
                shares.remove(key.projectId());
            }
        }
    }

    private static long sizeOf(UserBroadcast m) {
        return (long) m.payload().length + m.event().length() * 2L + ENTRY_OVERHEAD;
    }
}
