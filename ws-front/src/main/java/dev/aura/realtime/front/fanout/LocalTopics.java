package dev.aura.realtime.front.fanout;

import dev.aura.realtime.front.protocol.Framing;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * This replica's joined channels, indexed for fan-out: by (project, channel {@link ChannelKeys key})
 * for broadcasts and by registry sub id for postgres changes. Thread-safe: event loops add and
 * remove, the relay thread reads. A channel's entry exists while at least one local member is
 * joined; broadcast history is kept apart ({@code history.HistoryStore}) because it outlives members.
 *
 * <p>For broadcasts a channel's members are also kept as {@link Shard}s, one immutable array per
 * event loop, rebuilt on the first broadcast after a join or leave: a broadcast then costs its
 * sender one queue item per loop, and each loop walks its own array.
 */
public final class LocalTopics {
    /** A postgres_changes binding and the channel it belongs to. */
    record BindingRef(Subscriber subscriber, PostgresBinding binding) {}

    /**
     * The members of one channel on one event loop, and which framings they use.
     *
     * @param framings indexed by {@link Framing#ordinal()}
     */
    record Shard(EventLoop loop, Subscriber[] subscribers, boolean[] framings) {}

    private record Key(String projectId, String channel) {}

    /** The members of one channel; {@link #shards()} is rebuilt after every change. */
    static final class Members {
        private final Set<Subscriber> set = ConcurrentHashMap.newKeySet();
        private final AtomicLong version = new AtomicLong();
        private final AtomicReference<Snapshot> snapshot = new AtomicReference<>();

        private record Snapshot(long version, Shard[] shards) {}

        private void changed() {
            version.incrementAndGet();
            snapshot.set(null);
        }

        /** The members by event loop, as of the last change (rebuilt when a change came since). */
        Shard[] shards() {
            Snapshot s = snapshot.get();
            long v = version.get();
            if (s != null && s.version() == v) {
                return s.shards();
            }
            Shard[] built = build();
            // a change during the build bumped the version: the stale arrays are used once, not kept
            if (version.get() == v) {
                snapshot.set(new Snapshot(v, built));
            }
            return built;
        }

        private Shard[] build() {
            Map<EventLoop, List<Subscriber>> byLoop = new IdentityHashMap<>();
            for (Subscriber s : set) {
                byLoop.computeIfAbsent(s.recipient().eventLoop(), l -> new ArrayList<>())
                        .add(s);
            }
            Shard[] out = new Shard[byLoop.size()];
            int i = 0;
            for (Map.Entry<EventLoop, List<Subscriber>> e : byLoop.entrySet()) {
                boolean[] framings = new boolean[Framing.values().length];
                for (Subscriber s : e.getValue()) {
                    framings[s.recipient().framing().ordinal()] = true;
                }
                out[i++] = new Shard(e.getKey(), e.getValue().toArray(Subscriber[]::new), framings);
            }
            return out;
        }
    }

    private final ConcurrentHashMap<Key, Members> topics = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, BindingRef> bySubId = new ConcurrentHashMap<>();

    public void add(Subscriber s) {
        topics.compute(new Key(s.projectId(), s.channelKey()), (k, members) -> {
            Members m = members == null ? new Members() : members;
            m.set.add(s);
            m.changed();
            return m;
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
            members.set.remove(s);
            members.changed();
            return members.set.isEmpty() ? null : members;
        });
    }

    /** The local members of a channel by its {@link ChannelKeys key} and event loop, or null when none joined it. */
    Shard[] shards(String projectId, String channel) {
        Members m = topics.get(new Key(projectId, channel));
        return m == null ? null : m.shards();
    }

    BindingRef binding(String subId) {
        return bySubId.get(subId);
    }

    /** Whether an active local channel holds a binding with this sub id (a second tab of a resumable channel). */
    public boolean holds(String subId) {
        BindingRef ref = bySubId.get(subId);
        return ref != null && ref.subscriber().active();
    }

    /** A snapshot of every joined channel with at least one postgres_changes binding. */
    List<Subscriber> withPostgresBindings() {
        List<Subscriber> out = new ArrayList<>();
        for (Members members : topics.values()) {
            for (Subscriber s : members.set) {
                if (!s.bindings().isEmpty()) {
                    out.add(s);
                }
            }
        }
        return out;
    }
}
