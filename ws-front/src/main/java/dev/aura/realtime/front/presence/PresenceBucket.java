package dev.aura.realtime.front.presence;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.KvBuckets;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.api.KeyValueWatcher;
import io.nats.client.impl.NatsKeyValueWatchSubscription;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Blocking access to the JetStream KV bucket {@link #NAME} (memory storage; created with the
 * configured max age when absent). Every method blocks on a NATS round trip, so only the
 * presence KV thread calls them.
 */
final class PresenceBucket {
    /** The bucket of tracked presences. */
    static final String NAME = "aura_presence";

    private static final Logger log = LoggerFactory.getLogger(PresenceBucket.class);

    private final Connection connection;
    private final KvBuckets.Spec spec;
    private final ObjectMapper mapper;
    private volatile KeyValue kv;

    /** @param maxBytes the bucket's byte limit ({@code PRESENCE_BUCKET_MAX_BYTES}) */
    PresenceBucket(Connection connection, Duration maxAge, long maxBytes, ObjectMapper mapper) {
        this.connection = connection;
        this.spec = new KvBuckets.Spec(NAME, maxAge, maxBytes, -1);
        this.mapper = mapper;
    }

    /**
     * Creates the bucket when the server does not have it (first start, or a NATS restart lost
     * the memory stream) and binds to it. A bucket that exists keeps its own max age; its byte
     * limit is set to ours ({@link KvBuckets#ensure}).
     */
    void ensure() throws IOException, JetStreamApiException {
        kv = KvBuckets.ensure(connection, spec);
    }

    private KeyValue kv() throws IOException, JetStreamApiException {
        KeyValue current = kv;
        if (current == null) {
            ensure();
            current = kv;
        }
        return current;
    }

    void put(PresenceEntry entry) throws IOException, JetStreamApiException {
        kv().put(entry.kvKey(), mapper.writeValueAsBytes(entry));
    }

    void delete(String kvKey) throws IOException, JetStreamApiException {
        kv().delete(kvKey);
    }

    /** Every live key (a headers-only scan of the bucket). */
    List<String> keys() throws IOException, JetStreamApiException, InterruptedException {
        return kv().keys();
    }

    /** Watches the whole bucket: current values first, then {@code endOfData}, then every change. */
    NatsKeyValueWatchSubscription watch(KeyValueWatcher watcher)
            throws IOException, JetStreamApiException, InterruptedException {
        return kv().watchAll(watcher);
    }

    PresenceEntry decode(byte[] value) throws IOException {
        return mapper.readValue(value, PresenceEntry.class);
    }
}
