package dev.aura.realtime.front.presence;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * This replica's mirror of the {@code aura_presence} bucket and the diffs it owes listeners.
 * Pure logic, no I/O; confined to the presence view thread (not thread-safe).
 *
 * <p>Every change is folded into its channel's pending {@link PresenceDiff}; {@link #drainDiffs}
 * hands them out. A put with the same {@code phx_ref} and payload (an owner's refresh) changes
 * nothing but the time it was last seen, which {@link #reconcile} uses.
 */
final class PresenceView {
    /** A channel of a project. */
    record Channel(String projectId, String name) {}

    private static final class Seen {
        final PresenceEntry entry;
        long lastSeenMs;

        Seen(PresenceEntry entry, long lastSeenMs) {
            this.entry = entry;
            this.lastSeenMs = lastSeenMs;
        }
    }

    private final Map<String, Seen> byKvKey = new HashMap<>();
    private final Map<Channel, Map<String, Seen>> byChannel = new HashMap<>();
    private final Map<Channel, PresenceDiff> pending = new LinkedHashMap<>();

    /** A KV put of {@code entry} under {@code kvKey}, observed at {@code nowMs}. */
    void put(String kvKey, PresenceEntry entry, long nowMs) {
        Seen old = byKvKey.get(kvKey);
        if (old != null && old.entry.sameAs(entry) && channelOf(old.entry).equals(channelOf(entry))) {
            old.lastSeenMs = nowMs;
            return;
        }
        if (old != null && old.entry.ref().equals(entry.ref())) {
            // Same ref, other payload: only a foreign writer does this. Replace silently; a
            // join and leave of one ref would cancel out on the client.
            remove(kvKey, false);
            add(kvKey, entry, nowMs, false);
            return;
        }
        add(kvKey, entry, nowMs, true);
        if (old != null) {
            diff(channelOf(old.entry)).leave(old.entry.key(), old.entry.wireMeta());
            if (!channelOf(old.entry).equals(channelOf(entry))) {
                detach(kvKey, channelOf(old.entry));
            }
        }
    }

    /** A KV delete or purge of {@code kvKey}: a leave when it was present. */
    void remove(String kvKey) {
        remove(kvKey, true);
    }

    /**
     * Drops entries the bucket no longer has: every key absent from {@code listed} (a key
     * listing started at {@code listedAtMs}) and not seen since {@code unseenSinceMs} becomes a
     * leave. Keys seen after that moment are kept: they may have been written after the listing
     * began, or their owner re-put them after a NATS restart.
     *
     * @return the number of entries dropped
     */
    int reconcile(Set<String> listed, long unseenSinceMs) {
        List<String> dead = new ArrayList<>();
        byKvKey.forEach((k, seen) -> {
            if (!listed.contains(k) && seen.lastSeenMs < unseenSinceMs) {
                dead.add(k);
            }
        });
        dead.forEach(this::remove);
        return dead.size();
    }

    /** The channel's {@code presence_state} payload: {@code {key: {"metas": [..]}}}. */
    ObjectNode state(Channel channel) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        for (Seen s : byChannel.getOrDefault(channel, Map.of()).values()) {
            ObjectNode perKey = (ObjectNode) out.get(s.entry.key());
            ArrayNode metas =
                    perKey == null ? out.putObject(s.entry.key()).putArray("metas") : (ArrayNode) perKey.get("metas");
            metas.add(s.entry.wireMeta());
        }
        return out;
    }

    /** Removes and returns the pending diffs of every channel (non-empty ones only). */
    Map<Channel, ObjectNode> drainDiffs() {
        Map<Channel, ObjectNode> out = new LinkedHashMap<>();
        pending.forEach((c, d) -> {
            if (!d.isEmpty()) {
                out.put(c, d.toJson());
            }
        });
        pending.clear();
        return out;
    }

    boolean hasPendingDiffs() {
        return !pending.isEmpty();
    }

    int size() {
        return byKvKey.size();
    }

    private void add(String kvKey, PresenceEntry entry, long nowMs, boolean announce) {
        Seen seen = new Seen(entry, nowMs);
        byKvKey.put(kvKey, seen);
        byChannel.computeIfAbsent(channelOf(entry), c -> new LinkedHashMap<>()).put(kvKey, seen);
        if (announce) {
            diff(channelOf(entry)).join(entry.key(), entry.wireMeta());
        }
    }

    private void remove(String kvKey, boolean announce) {
        Seen old = byKvKey.remove(kvKey);
        if (old == null) {
            return;
        }
        detach(kvKey, channelOf(old.entry));
        if (announce) {
            diff(channelOf(old.entry)).leave(old.entry.key(), old.entry.wireMeta());
        }
    }

    private void detach(String kvKey, Channel channel) {
        Map<String, Seen> members = byChannel.get(channel);
        if (members != null) {
            members.remove(kvKey);
            if (members.isEmpty()) {
                byChannel.remove(channel);
            }
        }
    }

    private PresenceDiff diff(Channel channel) {
        return pending.computeIfAbsent(channel, c -> new PresenceDiff());
    }

    private static Channel channelOf(PresenceEntry e) {
        return new Channel(e.projectId(), e.channel());
    }
}
