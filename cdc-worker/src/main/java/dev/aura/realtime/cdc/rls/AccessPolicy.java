package dev.aura.realtime.cdc.rls;

import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.List;

/**
 * Decides which of the bindings that matched a change may see it (docs/design.md C7).
 * Implementations get the changes of one shard batch at once so they can batch their checks.
 */
public interface AccessPolicy {
    /** One change and the bindings whose event and filter matched it. */
    record Candidates(BuiltEvent event, List<SubscriptionEntry> matched) {}

    /**
     * @return for each element of {@code batch}, in order, the messages to publish: the allowed
     *     {@code sub_id}s grouped by the {@link dev.aura.realtime.cdc.event.View} they get (empty
     *     when nobody may see the change); a check that fails denies (fails closed) the affected
     *     subscribers only, never the batch
     * @throws CdcFailure ({@code postgres_unavailable}) when Postgres itself was unreachable: that
     *     says nothing about any subscriber, so the batch fails and is re-read instead of dropped
     */
    List<List<Delivery>> allowed(List<Candidates> batch) throws CdcFailure;
}
