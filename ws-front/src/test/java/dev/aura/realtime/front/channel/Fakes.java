package dev.aura.realtime.front.channel;

import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.relay.BroadcastPublisher;
import dev.aura.realtime.front.relay.SubscriptionChecker;
import dev.aura.realtime.front.relay.SubscriptionRegistry;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Hand-written fakes of the relay seams. */
final class Fakes {
    private Fakes() {}

    /** Answers by table name; unknown tables are valid. */
    static final class Checker implements SubscriptionChecker {
        final Map<String, Outcome> byTable = new ConcurrentHashMap<>();
        final List<SubscriptionCheck.Request> asked = new CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<Outcome> check(SubscriptionCheck.Request request) {
            asked.add(request);
            return CompletableFuture.completedFuture(byTable.getOrDefault(request.table(), new Outcome.Valid("int8")));
        }
    }

    static final class Registry implements SubscriptionRegistry {
        final Map<String, SubscriptionEntry> live = new ConcurrentHashMap<>();
        final List<SubscriptionEntry> puts = new CopyOnWriteArrayList<>();
        final List<String> removed = new CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<Void> put(SubscriptionEntry entry) {
            puts.add(entry);
            live.put(entry.key(), entry);
            return CompletableFuture.completedFuture(null);
        }

        @Override
        public void remove(String key) {
            if (live.remove(key) != null) {
                removed.add(key);
            }
        }

        @Override
        public int size() {
            return live.size();
        }

        @Override
        public void close() {}
    }

    record Published(String projectId, String channel, UserBroadcast message) {}

    static final class Publisher implements BroadcastPublisher {
        final List<Published> published = new ArrayList<>();

        @Override
        public synchronized void publish(String projectId, String channel, UserBroadcast message) {
            published.add(new Published(projectId, channel, message));
        }
    }
}
