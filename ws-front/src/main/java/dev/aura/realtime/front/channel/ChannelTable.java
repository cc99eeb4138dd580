package dev.aura.realtime.front.channel;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The channels of one connection by topic: the joined ones and the joins still being checked
 * ({@link Joining}). A topic has at most one of each; a later join or a leave of the
 * topic supersedes its join in flight. Event loop only.
 */
final class ChannelTable {
    private final Map<String, Membership> joined = new HashMap<>();
    private final Map<String, Joining> joining = new HashMap<>();

    /** The joined channel of {@code topic}, or null. */
    Membership joined(String topic) {
        return joined.get(topic);
    }

    void add(Membership m) {
        joined.put(m.topic(), m);
    }

    /** Forgets {@code m} unless another channel took its topic since. */
    void remove(Membership m) {
        joined.remove(m.topic(), m);
    }

    /** Every joined channel, as they are now. */
    List<Membership> joined() {
        return List.copyOf(joined.values());
    }

    /** Whether {@code j} is still its topic's join in flight (not superseded, not finished). */
    boolean current(Joining j) {
        return joining.get(j.topic()) == j;
    }

    void joining(Joining j) {
        joining.put(j.topic(), j);
    }

    /** Ends the join in flight of {@code topic}; false when there was none. */
    boolean endJoining(String topic) {
        return joining.remove(topic) != null;
    }

    /** Channels joined and being joined: what {@code max_channels_per_client} counts. */
    int size() {
        return joined.size() + joining.size();
    }

    /** The connection is gone: no join in flight may finish. */
    void clearJoining() {
        joining.clear();
    }
}
