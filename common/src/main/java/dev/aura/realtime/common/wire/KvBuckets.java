package dev.aura.realtime.common.wire;

import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.KeyValue;
import io.nats.client.KeyValueManagement;
import io.nats.client.api.KeyValueConfiguration;
import io.nats.client.api.KeyValueStatus;
import io.nats.client.api.StorageType;
import java.io.IOException;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The product's JetStream KV buckets ({@link SubscriptionEntry#BUCKET}, {@code aura_presence}):
 * memory storage, one value per key, a max age after which an entry nobody refreshed is dead,
 * and a byte limit of its own. Both binaries create a bucket when it is missing (first start, or
 * a NATS restart lost the memory stream), so the configuration is written here once.
 *
 * <p><b>Bytes per bucket.</b> Each bucket has its own {@code max_bytes}, so a full presence
 * bucket cannot stop registrations and the reverse; without it both shared whatever the server's
 * JetStream memory store had left. A KV bucket discards new writes when full (jnats creates KV
 * streams with discard policy {@code new}): existing entries stay, and the writes that fail are
 * told to their writer. NATS has no byte limit per key prefix, so inside one bucket the projects
 * share the limit; per-project quotas belong to the binaries (docs/design.md G).
 */
public final class KvBuckets {
    private static final Logger log = LoggerFactory.getLogger(KvBuckets.class);

    /**
     * A bucket's configuration.
     *
     * @param name bucket name
     * @param maxAge max age of an entry (jnats calls it {@code ttl})
     * @param maxBytes byte limit of the whole bucket
     * @param maxValueBytes largest value, or -1 for the server's max payload
     */
    public record Spec(String name, Duration maxAge, long maxBytes, int maxValueBytes) {}

    private KvBuckets() {}

    /**
     * The registry bucket {@link SubscriptionEntry#BUCKET} with {@code maxBytes} in all and at
     * most {@link SubscriptionEntry#MAX_BYTES} per entry.
     */
    public static Spec registry(long maxBytes) {
        return new Spec(SubscriptionEntry.BUCKET, SubscriptionEntry.MAX_AGE, maxBytes, SubscriptionEntry.MAX_BYTES);
    }

    /**
     * Creates the bucket unless it exists, then binds to it. An existing bucket whose byte limits
     * differ from {@code spec} is updated to them (a changed {@code *_BUCKET_MAX_BYTES} takes
     * effect at the next start without deleting the bucket); its max age is kept.
     *
     * @throws IOException when NATS does not answer
     * @throws JetStreamApiException when JetStream refuses (e.g. not enabled on the server, or the
     *     limits exceed what the server's JetStream memory has left)
     */
    public static KeyValue ensure(Connection nats, Spec spec) throws IOException, JetStreamApiException {
        KeyValueManagement kvm = nats.keyValueManagement();
        KeyValueStatus status;
        try {
            status = kvm.getStatus(spec.name());
        } catch (JetStreamApiException notFound) {
            try {
                kvm.create(configuration(spec, spec.maxAge()));
                log.info(
                        "created KV bucket {} (memory, max age {} ms, {} bytes)",
                        spec.name(),
                        spec.maxAge().toMillis(),
                        spec.maxBytes());
            } catch (JetStreamApiException raced) {
                kvm.getStatus(spec.name()); // created by another process meanwhile; fails if it really is not there
            }
            return nats.keyValue(spec.name());
        }
        if (status.getMaxBucketSize() != spec.maxBytes() || status.getMaximumValueSize() != spec.maxValueBytes()) {
            kvm.update(configuration(spec, status.getTtl()));
            log.info(
                    "updated KV bucket {}: {} bytes (was {}), values up to {} bytes (was {})",
                    spec.name(),
                    spec.maxBytes(),
                    status.getMaxBucketSize(),
                    spec.maxValueBytes(),
                    status.getMaximumValueSize());
        }
        return nats.keyValue(spec.name());
    }

    /**
     * The bucket's max age in force (it is created from {@code spec} when missing).
     *
     * @throws IOException when NATS does not answer
     * @throws JetStreamApiException when JetStream refuses
     */
    public static Duration maxAge(Connection nats, Spec spec) throws IOException, JetStreamApiException {
        ensure(nats, spec);
        return nats.keyValueManagement().getStatus(spec.name()).getTtl();
    }

    /**
     * Sets the bucket's max age to {@code maxAge} when it is another (creating the bucket from
     * {@code spec} when missing): nats-server applies a changed max age to every message already
     * stored. @return whether it changed
     *
     * @throws IOException when NATS does not answer
     * @throws JetStreamApiException when JetStream refuses
     */
    public static boolean setMaxAge(Connection nats, Spec spec, Duration maxAge)
            throws IOException, JetStreamApiException {
        ensure(nats, spec);
        KeyValueManagement kvm = nats.keyValueManagement();
        KeyValueStatus status = kvm.getStatus(spec.name());
        if (status.getTtl().equals(maxAge)) {
            return false;
        }
        kvm.update(configuration(
                new Spec(spec.name(), maxAge, status.getMaxBucketSize(), status.getMaximumValueSize()), maxAge));
        log.info(
                "KV bucket {}: max age {} ms (was {})",
                spec.name(),
                maxAge.toMillis(),
                status.getTtl().toMillis());
        return true;
    }

    /**
     * What nats-server's memory store charges against {@code max_bytes} for a value of
     * {@code valueBytes} under {@code key}: the subject {@code $KV.<bucket>.<key>}, the value and
     * its fixed per-message overhead (16 bytes in nats-server's memstore; 32 counted here).
     */
    public static long storedBytes(String bucket, String key, long valueBytes) {
        return SUBJECT_PREFIX_BYTES + bucket.length() + 1 + key.length() + valueBytes + MESSAGE_OVERHEAD_BYTES;
    }

    /**
     * What a delete (or purge) marker of {@code key} occupies until the bucket's max age drops it:
     * the subject, the {@code KV-Operation} header (counted as 64 bytes) and the per-message overhead.
     */
    public static long markerBytes(String bucket, String key) {
        return storedBytes(bucket, key, MARKER_HEADER_BYTES);
    }

    private static final int SUBJECT_PREFIX_BYTES = "$KV.".length();
    private static final int MESSAGE_OVERHEAD_BYTES = 32;
    private static final int MARKER_HEADER_BYTES = 64;

    private static KeyValueConfiguration configuration(Spec spec, Duration maxAge) {
        return KeyValueConfiguration.builder()
                .name(spec.name())
                .storageType(StorageType.Memory)
                .maxHistoryPerKey(1)
                .ttl(maxAge)
                .maxBucketSize(spec.maxBytes())
                .maximumValueSize(spec.maxValueBytes())
                .build();
    }
}
