package dev.aura.realtime.cdc.event;

import dev.aura.realtime.cdc.failure.CdcFailure;

/**
 * Where the poll loop hands decoded changes. {@link #accept} may block (bounded queues keep the
 * worker's memory flat whatever the transaction size); {@link #flush} returns only once every
 * accepted change was published and the NATS connection flushed, so the caller may advance the
 * slot afterwards.
 */
public interface ChangeSink {
    /** @param projectId the project owning {@code change.schema()} */
    void accept(RowChange change, String projectId) throws InterruptedException;

    /**
     * @throws CdcFailure when anything accepted since the last flush was not published; the slot
     *     must not be advanced past those changes
     */
    void flush() throws InterruptedException, CdcFailure;
}
