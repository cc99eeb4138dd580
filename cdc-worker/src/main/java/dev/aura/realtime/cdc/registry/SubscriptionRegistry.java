package dev.aura.realtime.cdc.registry;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.List;
import java.util.Set;

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
     * Returns once {@link #candidates} reflects every registry write that was acknowledged before
     * this call (read your writes): a binding whose client was told "subscribed" before it
     * committed a change is matched against that change. Called by the poll loop's thread before
     * a batch is matched.
     *
     * @throws CdcFailure when that cannot be confirmed in time; the batch must fail (slot not advanced)
     */
    void awaitCurrent() throws CdcFailure, InterruptedException;
}
