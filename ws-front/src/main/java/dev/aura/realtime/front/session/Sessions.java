package dev.aura.realtime.front.session;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** Every open connection of this replica, for counting and for shutdown. Thread-safe. */
public final class Sessions {
    private final Set<ClientSession> open = ConcurrentHashMap.newKeySet();

    public void add(ClientSession s) {
        open.add(s);
    }

    public void remove(ClientSession s) {
        open.remove(s);
    }

    public int size() {
        return open.size();
    }

    public List<ClientSession> snapshot() {
        return List.copyOf(open);
    }
}
