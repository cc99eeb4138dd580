package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.concurrent.CompletableFuture;

/**
 * The registry of this replica's postgres_changes bindings that the cdc-worker matches changes
 * against (JetStream KV bucket {@code aura_subscriptions}, docs/design.md C8). Implementations keep
 * every live entry, refresh it before the bucket's max age and re-put all after a reconnect.
 * Thread-safe; calls never block the caller.
 */
public interface SubscriptionRegistry extends AutoCloseable {
    /**
     * Why a put was refused before anything was written: the entry would put its project over its
     * share of the bucket ({@link #getMessage()} is the reason to tell the client).
     */
    final class QuotaExceeded extends RuntimeException {
        public QuotaExceeded(String reason) {
            super(reason, null, false, false);
        }
    }

    /**
     * Adds or replaces the entry under {@link SubscriptionEntry#key()}; the future fails when the
     * write failed, with {@link QuotaExceeded} (at once, nothing written) when the project's share
     * of the bucket has no room for it.
     */
    CompletableFuture<Void> put(SubscriptionEntry entry);

    /** Forgets and deletes the entry with this key (no-op when unknown). */
    void remove(String key);

    /**
     * Parks the entry with this key (postgres_changes resume, docs/design.md R): writes it once
     * more with its expiry cut to {@code untilMs}, then forgets it without deleting it, so the
     * cdc-worker keeps computing its verdicts until then (or until the bucket's max age drops it)
     * and a rejoin on any replica can adopt its sub id by putting it again.
     */
    default void park(String key, long untilMs) {
        remove(key);
    }

    /** Stops refreshing; pending writes and deletes are given a bounded time to finish. Idempotent. */
    @Override
    void close();
}
