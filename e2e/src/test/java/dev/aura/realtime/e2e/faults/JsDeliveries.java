package dev.aura.realtime.e2e.faults;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.TreeSet;

/** What a realtime-js client received on its postgres_changes callbacks, as record ids. */
final class JsDeliveries {
    private JsDeliveries() {}

    static Set<Integer> insertedIds(RealtimeJsClient js, String channel) {
        Set<Integer> ids = new HashSet<>();
        for (JsonNode e : js.events()) {
            if ("postgres_changes".equals(e.path("type").asText())
                    && channel.equals(e.path("channel").asText())
                    && "INSERT".equals(e.path("payload").path("eventType").asText())) {
                ids.add(e.path("payload").path("new").path("id").asInt());
            }
        }
        return ids;
    }

    /** Waits until {@code channel} received every id of {@code expected}; fails naming the missing ones. */
    static void awaitAll(RealtimeJsClient js, String channel, Set<Integer> expected, Duration timeout, String context) {
        Set<Integer> missing = new TreeSet<>(expected);
        Waits.until(
                "every committed row at the client",
                timeout,
                Duration.ofMillis(100),
                () -> {
                    missing.removeAll(insertedIds(js, channel));
                    return missing.isEmpty();
                },
                () -> missing.size() + " of " + expected.size() + " committed rows never reached the client, e.g. "
                        + missing.stream().limit(20).toList() + "\n" + context);
    }
}
