package dev.aura.realtime.front.channel;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This replica's joined channels, indexed for fan-out: by (project, channel name) for
 * broadcasts and by registry sub id for postgres changes. Thread-safe: event loops add and
 * remove, the relay thread reads. A channel's state exists while at least one local member is
 * joined; broadcast history is kept apart ({@code history.HistoryStore}) because it outlives members.
 */
public final class LocalTopics {
    /** Local members of one channel of one project (its history lives in the {@code HistoryStore}). */
    public static final class TopicState {
        private final Set<Membership> members = ConcurrentHashMap.newKeySet();

        public Set<Membership> members() {
            return members;
        }
    }

    /** A postgres_changes binding and the channel it belongs to. */
    public record BindingRef(Membership membership, PostgresBinding binding) {}

    private record Key(String projectId, String channel) {}

    private final int historySize;
    private final ConcurrentHashMap<Key, TopicState> topics = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, BindingRef> bySubId = new ConcurrentHashMap<>();

    /** @param historySize broadcast history ring size per channel (messages), for {@link #historySize()} */
    public LocalTopics(int historySize) {
        this.historySize = historySize;
    }

    /** {@code HISTORY_SIZE}, as given at construction. */
    public int historySize() {
        return historySize;
    }

    public void add(Membership m) {
        topics.compute(new Key(m.projectId(), m.channelName()), (k, state) -> {
            TopicState s = state == null ? new TopicState() : state;
            s.members.add(m);
            return s;
        });
        for (PostgresBinding b : m.bindings()) {
            bySubId.put(b.subId(), new BindingRef(m, b));
        }
    }

    public void remove(Membership m) {
        for (PostgresBinding b : m.bindings()) {
            bySubId.remove(b.subId());
        }
        topics.computeIfPresent(new Key(m.projectId(), m.channelName()), (k, s) -> {
            s.members.remove(m);
            return s.members.isEmpty() ? null : s;
        });
    }

    /** The channel's state, or null when no local member joined it. */
    public TopicState state(String projectId, String channel) {
        return topics.get(new Key(projectId, channel));
    }

    public BindingRef binding(String subId) {
        return bySubId.get(subId);
    }

    /** A snapshot of every joined channel with at least one postgres_changes binding. */
    public List<Membership> withPostgresBindings() {
        List<Membership> out = new ArrayList<>();
        for (TopicState s : topics.values()) {
            for (Membership m : s.members) {
                if (!m.bindings().isEmpty()) {
                    out.add(m);
                }
            }
        }
        return out;
    }

    public int channelCount() {
        return topics.size();
    }
}
