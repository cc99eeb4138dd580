package dev.aura.realtime.front.testing;

import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.relay.BroadcastPublisher;
import dev.aura.realtime.front.relay.ProjectLimitsSource;
import dev.aura.realtime.front.relay.SubscriptionChecker;
import dev.aura.realtime.front.relay.SubscriptionRegistry;
import dev.aura.realtime.front.relay.UsageBoard;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/** Hand-written fakes of the relay seams. */
public final class Fakes {
    private Fakes() {}

    /** Answers by table name; unknown tables are valid. */
    public static final class Checker implements SubscriptionChecker {
        public final Map<String, Outcome> byTable = new ConcurrentHashMap<>();
        public final List<SubscriptionCheck.Request> asked = new CopyOnWriteArrayList<>();

        @Override
        public CompletableFuture<Outcome> check(SubscriptionCheck.Request request) {
            asked.add(request);
            return CompletableFuture.completedFuture(byTable.getOrDefault(request.table(), new Outcome.Valid("int8")));
        }
    }

    public static final class Registry implements SubscriptionRegistry {
        public final Map<String, SubscriptionEntry> live = new ConcurrentHashMap<>();
        public final List<SubscriptionEntry> puts = new CopyOnWriteArrayList<>();
        public final List<String> removed = new CopyOnWriteArrayList<>();

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
        public void close() {}
    }

    public record Published(String projectId, String channel, UserBroadcast message) {}

    public static final class Publisher implements BroadcastPublisher {
        public final List<Published> published = new ArrayList<>();

        @Override
        public synchronized void publish(String projectId, String channel, UserBroadcast message) {
            published.add(new Published(projectId, channel, message));
        }
    }

    /** The other replicas' counts, set by hand. */
    public static final class Board implements UsageBoard {
        public final Map<String, UsageReport.Counts> counts = new ConcurrentHashMap<>();

        @Override
        public UsageReport.Counts others(String projectId) {
            return counts.getOrDefault(projectId, ZERO);
        }
    }

    /** Per-project limit overrides, set by hand. */
    public static final class LimitsTable implements ProjectLimitsSource {
        public final Map<String, ProjectLimits> rows = new ConcurrentHashMap<>();

        @Override
        public ProjectLimits overrides(String projectId) {
            return rows.getOrDefault(projectId, ProjectLimits.DEFAULTS);
        }
    }
}
