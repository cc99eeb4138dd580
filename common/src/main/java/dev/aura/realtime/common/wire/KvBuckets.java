package dev.aura.realtime.common.wire;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.KeyValueManagement;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.StorageType;
import java.io.IOException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The product's JetStream KV buckets ({@link SubscriptionEntry#BUCKET}, {@code aura_presence}):
 * memory storage, one value per key, a max age after which an entry nobody refreshed is dead.
 * Both binaries create a bucket when it is missing (first start, or a NATS restart lost the
 * memory stream), so the configuration is written here once.
 */
public final class KvBuckets {
    private static final Logger log = LoggerFactory.getLogger(KvBuckets.class);

    private KvBuckets() {}

    /**
     * Creates bucket {@code name} unless it exists (an existing bucket keeps its configuration),
     * then binds to it.
     *
     * @param maxAge the bucket's max age (jnats calls it {@code ttl})
     * @throws IOException when NATS does not answer
     * @throws JetStreamApiException when JetStream refuses (e.g. not enabled on the server)
     */
    public static KeyValue ensure(Connection nats, String name, Duration maxAge)
            throws IOException, JetStreamApiException {
        KeyValueManagement kvm = nats.keyValueManagement();
        try {
            kvm.getStatus(name);
        } catch (JetStreamApiException notFound) {
            try {
                kvm.create(KeyValueConfiguration.builder()
                        .name(name)
                        .storageType(StorageType.Memory)
                        .maxHistoryPerKey(1)
                        .ttl(maxAge)
                        .build());
                log.info("created KV bucket {} (memory, max age {} ms)", name, maxAge.toMillis());
            } catch (JetStreamApiException raced) {
                kvm.getStatus(name); // created by another process meanwhile; fails if it really is not there
            }
        }
        return nats.keyValue(name);
    }
}
