package dev.aura.realtime.cdc.pipeline;

import dev.aura.realtime.cdc.decode.RowChange;

/**
 * Where the poll loop hands decoded changes. {@link #accept} may block (bounded queues keep the
 * worker's memory flat whatever the transaction size); {@link #flush} returns only once every
 * accepted change was published and the NATS connection flushed, so the caller may advance the
 * slot afterwards.
 */
public interface ChangeSink {
    /** @param projectId the project owning {@code change.schema()} */
    void accept(RowChange change, String projectId) throws InterruptedException, PipelineException;

    /** @throws PipelineException when anything accepted since the last flush was not published */
    void flush() throws InterruptedException, PipelineException;
}
