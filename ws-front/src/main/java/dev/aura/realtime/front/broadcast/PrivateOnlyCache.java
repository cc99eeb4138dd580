package dev.aura.realtime.front.broadcast;

import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each project's {@code private_only} setting as a cdc-worker last reported it (docs/design.md H1).
 *
 * <p>An answer is used for {@link #TTL_MS}; after that the next public join still gets the last
 * answer at once and a new question goes out in the background (one at a time per project), so a
 * public join waits for a cdc-worker only the first time this replica sees the project. A project
 * no cdc-worker answered for counts as not private-only (also remembered for {@link #TTL_MS}):
 * while no cdc-worker answers, nothing private can leak through a public channel (private
 * messages travel under private channel keys, and messages from the database need a cdc-worker).
 * Thread-safe; one entry per project that joined on this replica.
 */
public final class PrivateOnlyCache {
    /** How long an answer is used before it is asked again: how soon a changed setting takes effect. */
    public static final long TTL_MS = 5_000;

    private record Entry(boolean privateOnly, long atMs, boolean refreshing) {}

    private final ChannelAccessClient access;
    private final Clock clock;
    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();

    public PrivateOnlyCache(ChannelAccessClient access, Clock clock) {
        this.access = access;
        this.clock = clock;
    }

    /** Whether the project refuses public channels; completes at once unless the project is new here. */
    CompletableFuture<Boolean> privateOnly(String projectId) {
        long now = clock.millis();
        Entry e = entries.get(projectId);
        if (e == null) {
            return ask(projectId, false);
        }
        if (now - e.atMs() >= TTL_MS && !e.refreshing()) {
            Entry marked = new Entry(e.privateOnly(), e.atMs(), true);
            if (entries.replace(projectId, e, marked)) {
                ask(projectId, e.privateOnly());
            }
        }
        return CompletableFuture.completedFuture(e.privateOnly());
    }

    /** Asks a cdc-worker; an unanswered question keeps {@code fallback} for another {@link #TTL_MS}. */
    private CompletableFuture<Boolean> ask(String projectId, boolean fallback) {
        return access.ask(ChannelAccess.Request.settings(projectId))
                .exceptionally(err -> ChannelAccess.Reply.failed(ChannelAccessClient.UNAVAILABLE))
                .thenApply(reply -> {
                    boolean value = reply.error() == null ? reply.privateOnly() : fallback;
                    entries.put(projectId, new Entry(value, clock.millis(), false));
                    return value;
                });
    }

    /** Remembers a setting learnt from another answer (a private join's read check). */
    void learn(String projectId, boolean privateOnly) {
        entries.put(projectId, new Entry(privateOnly, clock.millis(), false));
    }
}
