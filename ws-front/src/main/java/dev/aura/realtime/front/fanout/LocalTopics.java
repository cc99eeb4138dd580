package dev.aura.realtime.front.fanout;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This replica's joined channels, indexed for fan-out: by (project, channel name) for
 * broadcasts and by registry sub id for postgres changes. Thread-safe: event loops add and
 * remove, the relay thread reads. A channel's entry exists while at least one local member is
 * joined; broadcast history is kept apart ({@code history.HistoryStore}) because it outlives members.
 */
public final class LocalTopics {
    /** A postgres_changes binding and the channel it belongs to. */
    record BindingRef(Subscriber subscriber, PostgresBinding binding) {}

    private record Key(String projectId, String channel) {}

    private final ConcurrentHashMap<Key, Set<Subscriber>> topics = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, BindingRef> bySubId = new ConcurrentHashMap<>();

    public void add(Subscriber s) {
        topics.compute(new Key(s.projectId(), s.channelKey()), (k, members) -> {
            Set<Subscriber> set = members == null ? ConcurrentHashMap.newKeySet() : members;
            set.add(s);
            return set;
        });
        for (PostgresBinding b : s.bindings()) {
            bySubId.put(b.subId(), new BindingRef(s, b));
        }
    }

    public void remove(Subscriber s) {
        for (PostgresBinding b : s.bindings()) {
            bySubId.remove(b.subId());
        }
        topics.computeIfPresent(new Key(s.projectId(), s.channelKey()), (k, members) -> {
            members.remove(s);
            return members.isEmpty() ? null : members;
        });
    }

    /** The local members of a channel by its {@link ChannelKeys key} (a live view), or null when none joined it. */
    Set<Subscriber> members(String projectId, String channel) {
        return topics.get(new Key(projectId, channel));
    }

    BindingRef binding(String subId) {
        return bySubId.get(subId);
    }

    /** A snapshot of every joined channel with at least one postgres_changes binding. */
    List<Subscriber> withPostgresBindings() {
        List<Subscriber> out = new ArrayList<>();
        for (Set<Subscriber> members : topics.values()) {
            for (Subscriber s : members) {
                if (!s.bindings().isEmpty()) {
                    out.add(s);
                }
            }
        }
        return out;
    }
}
