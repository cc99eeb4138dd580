package dev.aura.realtime.cdc.registry;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** What the RLS shards read from the subscription registry (docs/design.md C8); {@link RegistryWatch} in production. */
public interface SubscriptionRegistry {
    /**
     * The live bindings for a change of {@code table} in {@code projectId}, including bindings for
     * every table ({@code *}). Never null; callable from any thread.
     */
    List<SubscriptionEntry> candidates(String projectId, String table);

    /**
     * False while the registry may lack bindings that exist (re-synchronising after a NATS
     * reconnect): matching now would drop their changes while the slot advances past them, so
     * the batch must fail and be re-read.
     */
    boolean synchronised();

    /** The ws-front replicas whose bindings are still awaited while not {@link #synchronised()}. */
    Set<String> awaitedReplicas();

    /**
     * Asks, without blocking, where the registry stands now: every registry write acknowledged
     * before this call is at or before the returned position. Pair it with {@link #awaitApplied}.
     */
    CompletableFuture<Long> position();

    /**
     * Returns once {@link #candidates} reflects the registry up to {@code position} (read your
     * writes): a binding whose client was told "subscribed" before it committed a change is
     * matched against that change, provided the position was asked for after the change was read.
     *
     * @throws CdcFailure when that cannot be confirmed in time; the change must not be confirmed
     *     to Postgres (it is read again)
     */
    void awaitApplied(CompletableFuture<Long> position) throws CdcFailure, InterruptedException;

    /** {@link #awaitApplied} of a position asked for now. */
    default void awaitCurrent() throws CdcFailure, InterruptedException {
        awaitApplied(position());
    }
}
