package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.common.wire.AuraHeaders;
import io.nats.client.Connection;
import io.nats.client.impl.Headers;
import java.time.Duration;
import java.util.concurrent.TimeoutException;

/**
 * Publishes to core NATS (not JetStream; PRODUCT.md C10) with the {@code Aura-Origin},
 * {@code Aura-Event-Id} and {@code Aura-Lease-Epoch} headers. Thread-safe (jnats connections are).
 *
 * <p>{@link #flush} is the durability point of the CDC loop: the slot is advanced only after it
 * returned, i.e. after the server acknowledged everything published before it (a PING/PONG
 * round trip behind the published messages).
 */
public final class EventPublisher {
    private final Connection nats;
    private final String origin;

    public EventPublisher(Connection nats, String origin) {
        this.nats = nats;
        this.origin = origin;
    }

    /**
     * @throws IllegalStateException when the connection is closed (jnats); while reconnecting,
     *     jnats buffers the message and {@link #flush} fails instead
     */
    public void publish(String subject, String eventId, long leaseEpoch, byte[] body) {
        Headers headers = new Headers()
                .add(AuraHeaders.ORIGIN, origin)
                .add(AuraHeaders.EVENT_ID, eventId)
                .add(AuraHeaders.LEASE_EPOCH, Long.toString(leaseEpoch));
        nats.publish(subject, headers, body);
    }

    /** Publishes without event headers (status messages). */
    public void publishPlain(String subject, byte[] body) {
        nats.publish(subject, new Headers().add(AuraHeaders.ORIGIN, origin), body);
    }

    /**
     * @throws TimeoutException when the server did not confirm within {@code timeout} (not connected, slow)
     */
    public void flush(Duration timeout) throws TimeoutException, InterruptedException {
        nats.flush(timeout);
    }

    public boolean connected() {
        return nats.getStatus() == Connection.Status.CONNECTED;
    }
}
