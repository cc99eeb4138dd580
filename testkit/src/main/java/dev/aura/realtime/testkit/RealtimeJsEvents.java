package dev.aura.realtime.testkit;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Everything the realtime-js driver printed, in order, and waiting for it: the event half of
 * {@link RealtimeJsClient} (the command half is {@link RealtimeJsDriver}).
 *
 * <p>The driver's reader thread {@link #record}s; test threads read and wait. Waiting uses the
 * list's monitor, so an event wakes its waiter at once.
 */
final class RealtimeJsEvents {
    private final List<JsonNode> events = new ArrayList<>();
    /** What a failure message appends (the driver's log tail). */
    private final Supplier<String> diagnostics;

    RealtimeJsEvents(Supplier<String> diagnostics) {
        this.diagnostics = diagnostics;
    }

    void record(JsonNode event) {
        synchronized (events) {
            events.add(event);
            events.notifyAll();
        }
    }

    List<JsonNode> snapshot() {
        synchronized (events) {
            return List.copyOf(events);
        }
    }

    int count() {
        synchronized (events) {
            return events.size();
        }
    }

    /**
     * Waits for an event at index {@code fromIndex} or later matching {@code predicate}.
     *
     * @return the first matching event
     * @throws AssertionError after {@code timeout}, listing the events seen
     */
    JsonNode await(int fromIndex, Predicate<JsonNode> predicate, Duration timeout) {
        int at = awaitIndex(fromIndex, predicate, timeout);
        synchronized (events) {
            return events.get(at);
        }
    }

    /** As {@link #await}, returning the index of the first matching event. */
    int awaitIndex(int fromIndex, Predicate<JsonNode> predicate, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        synchronized (events) {
            int checked = fromIndex;
            while (true) {
                for (; checked < events.size(); checked++) {
                    if (predicate.test(events.get(checked))) {
                        return checked;
                    }
                }
                long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime());
                if (remainingMs <= 0) {
                    throw new AssertionError("no matching realtime-js event within " + timeout + " (from index "
                            + fromIndex + "); events seen:\n" + describe(events) + "\n--- driver log ---\n"
                            + diagnostics.get());
                }
                try {
                    events.wait(remainingMs);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted", e);
                }
            }
        }
    }

    /**
     * Asserts that no event at index {@code fromIndex} or later matches during {@code window}
     * (the window is the scenario: nothing may arrive in it).
     *
     * @throws AssertionError naming the unexpected event
     */
    void assertNone(int fromIndex, Predicate<JsonNode> predicate, Duration window) {
        try {
            Awaitility.await()
                    .during(window)
                    .atMost(window.plusMillis(500))
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> firstMatch(fromIndex, predicate) == null);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError("unexpected realtime-js event: " + firstMatch(fromIndex, predicate), e);
        }
    }

    private JsonNode firstMatch(int fromIndex, Predicate<JsonNode> predicate) {
        List<JsonNode> all = snapshot();
        for (int i = fromIndex; i < all.size(); i++) {
            if (predicate.test(all.get(i))) {
                return all.get(i);
            }
        }
        return null;
    }

    private static String describe(List<JsonNode> events) {
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < events.size(); i++) {
            text.append("  [")
                    .append(i)
                    .append("] ")
                    .append(RealtimeJsDriver.text(events.get(i)))
                    .append('\n');
        }
        return text.isEmpty() ? "  (none)" : text.toString();
    }
}
