package dev.aura.realtime.cdc.registry;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * No registry entry is trusted (docs/design.md C8): every ws-front may write the bucket, so an
 * entry that is too large, does not parse or has a {@link SubscriptionEntry#problem problem} is
 * left out of the index, logged ({@code RegistryEntryInvalid}) and counted
 * ({@code aura_cdc_registry_entries_invalid_total}), once per key: a re-watch replays it.
 * Thread-safe.
 */
final class EntryTrust {
    private static final Logger log = LoggerFactory.getLogger(RegistryWatch.class);
    /** Invalid keys remembered so a re-watch does not log and count them again; cleared when full. */
    private static final int MAX_REMEMBERED_INVALID = 10_000;

    private final CdcMetrics metrics;
    private final ObjectMapper mapper = WireJson.mapper();
    private final Set<String> invalidKeys = ConcurrentHashMap.newKeySet();

    EntryTrust(CdcMetrics metrics) {
        this.metrics = metrics;
    }

    /** The entry put under {@code key}, or null when it is not one to index (logged and counted once). */
    SubscriptionEntry accept(String key, byte[] value) {
        SubscriptionEntry entry = null;
        String problem;
        if (value == null || value.length > SubscriptionEntry.MAX_BYTES) {
            problem = (value == null ? 0 : value.length) + " bytes (at most " + SubscriptionEntry.MAX_BYTES + ")";
        } else {
            try {
                entry = mapper.readValue(value, SubscriptionEntry.class);
                problem = entry.problem(key);
            } catch (IOException | RuntimeException bad) {
                problem = "not a subscription entry: " + bad.getMessage();
            }
        }
        if (problem != null) {
            rejected(key, problem);
            return null;
        }
        invalidKeys.remove(key);
        return entry;
    }

    /** The key was deleted: an entry put there again is judged afresh. */
    void forget(String key) {
        invalidKeys.remove(key);
    }

    /** Logs and counts an invalid entry once per key (a re-watch replays it). */
    private void rejected(String key, String problem) {
        if (invalidKeys.size() >= MAX_REMEMBERED_INVALID) {
            invalidKeys.clear();
        }
        if (invalidKeys.add(key)) {
            metrics.registryEntriesInvalid.increment();
            log.warn("[RegistryEntryInvalid] ignoring registry entry {}: {}", abbreviate(key), problem);
        }
    }

    private static String abbreviate(String text) {
        return text.length() <= 200 ? text : text.substring(0, 200) + "...";
    }
}
