package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.cdc.failure.CdcFailure;
import java.time.Duration;

/** Where the RLS shards publish change events; {@link EventPublisher} (core NATS) in production. */
public interface ChangePublisher {
    /**
     * Sends one event with the {@code Aura-Event-Id} and {@code Aura-Lease-Epoch} headers.
     *
     * @throws CdcFailure ({@code nats_unavailable}) when the connection is closed
     */
    void publish(String subject, String eventId, long leaseEpoch, byte[] body) throws CdcFailure;

    /**
     * Returns once the server has processed everything published before the call: the
     * durability point after which the slot may advance.
     *
     * @throws CdcFailure ({@code nats_unavailable}) when that was not confirmed within {@code timeout}
     */
    void flush(Duration timeout) throws CdcFailure, InterruptedException;

    /** The largest message body the server accepts (its {@code max_payload}); unbounded when unknown. */
    default long maxPayload() {
        return Long.MAX_VALUE;
    }
}
