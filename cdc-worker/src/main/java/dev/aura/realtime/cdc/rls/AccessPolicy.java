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
    /**
     * One change and the bindings whose event and filter matched it.
     *
     * @param xid the change's transaction id, 0 when unknown ({@link dev.aura.realtime.cdc.event.RowChange#xid})
     */
    record Candidates(BuiltEvent event, List<SubscriptionEntry> matched, long xid) {
        public Candidates(BuiltEvent event, List<SubscriptionEntry> matched) {
            this(event, matched, 0);
        }
    }

    /**
     * What was decided for one change.
     *
     * @param deliveries the allowed {@code sub_id}s grouped by the view they get (empty when nobody
     *     may see the change)
     * @param timedOut subscribers whose check did not finish even alone with the late lane's time
     *     (docs/design.md C14): they get an error event, and the change is quarantined
     * @param late the project's checks took the time it has in the shared lane: the change (and
     *     every later change of the project) goes to the project's late lane, unpublished
     */
    record Decision(List<Delivery> deliveries, List<String> timedOut, boolean late) {
        public static final Decision LATE = new Decision(List.of(), List.of(), true);

        public Decision {
            deliveries = List.copyOf(deliveries);
            timedOut = List.copyOf(timedOut);
        }

        public static Decision deliver(List<Delivery> deliveries) {
            return new Decision(deliveries, List.of(), false);
        }
    }

    /**
     * @return for each element of {@code batch}, in order, its {@link Decision}; a check that fails
     *     denies (fails closed) the affected subscribers only, never the batch
     * @throws CdcFailure ({@code postgres_unavailable}) when Postgres itself was unreachable: that
     *     says nothing about any subscriber, so the batch fails and is re-read instead of dropped
     */
    List<Decision> decide(List<Candidates> batch) throws CdcFailure;
}
