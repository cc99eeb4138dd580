package dev.aura.realtime.cdc.event;

import dev.aura.realtime.cdc.failure.CdcFailure;

/**
 * Where the slot readers hand decoded changes. {@link #accept} may block: the sink's queues are
 * bounded in bytes ({@link RowChange#heapCost()}), which keeps the worker's memory flat whatever
 * the transaction size. A {@link Barrier} marks a point in the stream of accepted changes and
 * completes once everything accepted before it was published and NATS confirmed it, so the
 * caller may then confirm the slot up to that point.
 */
public interface ChangeSink {
    /**
     * Takes a change. Called by one reader thread only: the sink may keep a few accepted changes
     * back to hand them over in batches, until {@link #handOff}, {@link #mark} or its own batch
     * bound.
     *
     * @param projectId the project owning {@code change.schema()}
     */
    void accept(RowChange change, String projectId) throws InterruptedException;

    /** Hands every accepted change over to be published (a reader that goes idle calls it). */
    void handOff() throws InterruptedException;

    /** Hands over and marks the changes accepted so far; the caller keeps reading while they are published. */
    Barrier mark() throws InterruptedException;

    /**
     * A reading of the slot starts (again) from its confirmed position: what the previous reading
     * accepted and did not get confirmed is read again, so the sink drops what it still holds of it
     * instead of publishing it (a change of it published after one that failed would overtake
     * that one). Called by the reader thread before each reading.
     */
    default void newReading() {}

    /**
     * Waits until every change accepted so far was published and confirmed.
     *
     * @throws CdcFailure when anything accepted since the last flush was not published; the slot
     *     must not be advanced past those changes
     */
    default void flush() throws InterruptedException, CdcFailure {
        mark().await();
    }

    /** A point in the accepted changes. */
    interface Barrier {
        /** True once every change before the barrier was processed (published or failed); never blocks. */
        boolean processed();

        /**
         * Waits until {@link #processed()}, then until NATS confirmed the publishes.
         *
         * @throws CdcFailure when a change before the barrier was not published (the slot must
         *     not be confirmed past it)
         */
        void await() throws InterruptedException, CdcFailure;
    }
}
