package dev.aura.realtime.testkit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import java.io.IOException;
import java.time.Duration;
import java.util.UUID;

/**
 * postgres_changes bindings written straight into the subscription registry (JetStream KV bucket
 * {@link SubscriptionEntry#BUCKET}, docs/design.md C8), as ws-front writes them, for tests that
 * drive the cdc-worker without a ws-front.
 *
 * <p>The cdc-worker ignores an entry not re-put within {@link SubscriptionEntry#MAX_AGE}: a test
 * running longer must put its entries again (ws-front re-puts every 30 s).
 */
public final class RegistryEntries {
    /** Token expiry written into test entries: far enough for any test or benchmark. */
    private static final Duration TOKEN_LIFETIME = Duration.ofHours(24);

    private static final ObjectMapper JSON = WireJson.mapper();
    /** The bucket's byte limit when a test creates it: the binaries' default. */
    private static final long REGISTRY_BUCKET_MAX_BYTES =
            dev.aura.realtime.common.config.SharedSettings.REGISTRY_BUCKET_MAX_BYTES.defaultValue();

    private RegistryEntries() {}

    /** Claims {@code {"role": role, "ref": projectId}}, to extend before {@link #binding}. */
    public static ObjectNode claims(String role, String projectId) {
        return JSON.createObjectNode().put("role", role).put("ref", projectId);
    }

    /**
     * A new binding (fresh sub id, no filter) to every event of {@code table}, for a subscriber
     * with {@code claims}; its role is the {@code role} claim.
     *
     * @param instance the owning ws-front instance to record (any name)
     */
    public static SubscriptionEntry binding(String projectId, String table, ObjectNode claims, String instance) {
        return new SubscriptionEntry(
                UUID.randomUUID().toString(),
                projectId,
                table,
                "*",
                null,
                claims.path("role").asText(),
                claims,
                System.currentTimeMillis() + TOKEN_LIFETIME.toMillis(),
                instance);
    }

    /**
     * Puts {@code entry} under its key, creating the bucket first when absent (with the
     * configuration both binaries use).
     *
     * @return the JSON written, for re-puts
     * @throws IllegalStateException when NATS or JetStream refuses
     */
    public static byte[] put(Connection nats, SubscriptionEntry entry) {
        try {
            byte[] json = JSON.writeValueAsBytes(entry);
            KvBuckets.ensure(nats, KvBuckets.registry(REGISTRY_BUCKET_MAX_BYTES))
                    .put(entry.key(), json);
            return json;
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cannot put registry entry " + entry.key() + ": " + e, e);
        }
    }
}
