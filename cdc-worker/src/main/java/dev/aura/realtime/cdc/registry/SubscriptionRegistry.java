package dev.aura.realtime.cdc.registry;

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
}
