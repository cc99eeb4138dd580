package dev.aura.realtime.front.session;

import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each project's {@code private_only} setting as a cdc-worker last reported it (docs/design.md H1),
 * asked again at most every {@link #TTL_MS}: a public join of a project asks at most once per
 * that time per replica. A project unknown to every cdc-worker that answered, or with no answer
 * at all, counts as not private-only: while no cdc-worker answers, nothing private can leak
 * through a public channel (private messages travel under private channel keys, and messages
 * from the database need a cdc-worker). A stale known value is kept until a new answer replaces
 * it. Thread-safe; one entry per project that joined (bounded by the projects).
 */
public final class PrivateOnlyCache {
    /** How long an answer is used before asking again. */
    public static final long TTL_MS = 5_000;

    private record Entry(boolean privateOnly, long atMs) {}

    private final ChannelAccessClient access;
    private final Clock clock;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    public PrivateOnlyCache(ChannelAccessClient access, Clock clock) {
        this.access = access;
        this.clock = clock;
    }

    /** Whether the project refuses public channels; completes at once while the cached answer is fresh. */
    CompletableFuture<Boolean> privateOnly(String projectId) {
        long now = clock.millis();
        Entry e = entries.get(projectId);
        if (e != null && now - e.atMs() < TTL_MS) {
            return CompletableFuture.completedFuture(e.privateOnly());
        }
        return access.ask(ChannelAccess.Request.settings(projectId)).thenApply(reply -> {
            if (reply.error() == null) {
                entries.put(projectId, new Entry(reply.privateOnly(), clock.millis()));
                return reply.privateOnly();
            }
            return e != null && e.privateOnly();
        });
    }

    /** Remembers a setting learnt from another answer (a private join's read check). */
    void learn(String projectId, boolean privateOnly) {
        entries.put(projectId, new Entry(privateOnly, clock.millis()));
    }
}
