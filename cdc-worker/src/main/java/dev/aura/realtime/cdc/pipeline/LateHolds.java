package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.failure.CdcFailure;

/** What a shard's batch step asks of the late lanes. */
interface LateHolds {
    /** Whether the project's changes go to its late lane now. */
    boolean isLate(String projectId);

    /** The project's changes go to its late lane from now on. */
    void markLate(String projectId);

    /**
     * Stores the change in its project's late lane (the flush awaits the store).
     *
     * @return false when the lane is full: the change is given up (its fault)
     */
    boolean hold(RowChange change, String projectId) throws CdcFailure;

    /** No late lane: what the late lane's own batch step uses. */
    LateHolds NONE = new LateHolds() {
        @Override
        public boolean isLate(String projectId) {
            return false;
        }

        @Override
        public void markLate(String projectId) {}

        @Override
        public boolean hold(RowChange change, String projectId) {
            return false;
        }
    };
}
