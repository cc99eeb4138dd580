package dev.aura.realtime.e2e.faults;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.time.Instant;
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
        Instant deadline = Instant.now().plus(timeout);
        Set<Integer> missing = new TreeSet<>(expected);
        while (Instant.now().isBefore(deadline)) {
            missing.removeAll(insertedIds(js, channel));
            if (missing.isEmpty()) {
                return;
            }
            sleep(100);
        }
        throw new AssertionError(
                missing.size() + " of " + expected.size() + " committed rows never reached the client, e.g. "
                        + missing.stream().limit(20).toList() + "\n" + context);
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
