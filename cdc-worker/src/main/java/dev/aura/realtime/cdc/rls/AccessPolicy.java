package dev.aura.realtime.cdc.rls;

import dev.aura.realtime.cdc.pipeline.BuiltEvent;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.List;

/**
 * Decides which of the bindings that matched a change may see it (PRODUCT.md C7).
 * Implementations get the changes of one shard batch at once so they can batch their checks.
 */
public interface AccessPolicy {
    /** One change and the bindings whose event and filter matched it. */
    record Candidates(BuiltEvent event, List<SubscriptionEntry> matched) {}

    /**
     * @return for each element of {@code batch}, in order, the {@code sub_id}s allowed; failures
     *     deny (fail closed) the affected subscribers only, never the batch
     */
    List<List<String>> allowed(List<Candidates> batch) throws InterruptedException;
}
