package dev.aura.realtime.e2e.resume;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.IntPredicate;
import java.util.function.Supplier;

/** What realtime-js handed the channel's postgres_changes callback, and the assertions on it. */
final class Deliveries {
    private Deliveries() {}

    /** The {@code new} records of the INSERTs the channel's callback received, in order. */
    static List<JsonNode> inserts(RealtimeJsClient js, String channel) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : js.events()) {
            if ("postgres_changes".equals(e.path("type").asText())
                    && channel.equals(e.path("channel").asText())
                    && "INSERT".equals(e.path("payload").path("eventType").asText())) {
                out.add(e.path("payload").path("new"));
            }
        }
        return out;
    }

    /** The ids of {@link #inserts}, in the order received. */
    static List<Integer> ids(RealtimeJsClient js, String channel) {
        return inserts(js, channel).stream().map(r -> r.path("id").asInt()).toList();
    }

    /** The system messages of the channel telling the client that resume is not possible. */
    static List<JsonNode> resumeNotPossible(RealtimeJsClient js, String channel) {
        return js.events().stream()
                .filter(e -> "system".equals(e.path("type").asText())
                        && channel.equals(e.path("channel").asText())
                        && "ResumeNotPossible"
                                .equals(e.path("payload").path("code").asText()))
                .map(e -> e.path("payload"))
                .toList();
    }

    /**
     * Waits up to {@code timeout} until every id of {@code expected} arrived, then {@code quiet}
     * longer for duplicates; then asserts the client received exactly {@code expected}, in that
     * order, each once. The failure names how many rows never arrived, the duplicates and the
     * first order breaks.
     */
    static void assertExactlyOnceInOrder(
            RealtimeJsClient js,
            String channel,
            List<Integer> expected,
            Duration timeout,
            Duration quiet,
            Supplier<String> context) {
        assertExactlyOnceInOrder(js, channel, expected, id -> true, timeout, quiet, context);
    }

    /** As above, looking only at the received ids {@code considered} accepts. */
    static void assertExactlyOnceInOrder(
            RealtimeJsClient js,
            String channel,
            List<Integer> expected,
            IntPredicate considered,
            Duration timeout,
            Duration quiet,
            Supplier<String> context) {
        try {
            Waits.until(
                    "every committed row at the client",
                    timeout,
                    Duration.ofMillis(100),
                    () -> new HashSet<>(ids(js, channel)).containsAll(expected),
                    () -> "");
        } catch (AssertionError notAll) {
            // reported below with the full picture
        }
        sleep(quiet);
        List<Integer> got = ids(js, channel).stream().filter(considered::test).toList();
        String report = describe(expected, got);
        assertThat(got).as(report + "\n" + context.get()).isEqualTo(expected);
        System.out.println("client received " + report);
    }

    /** A one-paragraph summary: rows committed, received, missing, duplicated, out of order. */
    static String describe(List<Integer> expected, List<Integer> got) {
        Set<Integer> missing = new TreeSet<>(expected);
        missing.removeAll(got);
        Set<Integer> seen = new HashSet<>();
        List<Integer> duplicates = new ArrayList<>();
        List<String> breaks = new ArrayList<>();
        for (int i = 0; i < got.size(); i++) {
            if (!seen.add(got.get(i))) {
                duplicates.add(got.get(i));
            }
            if (i > 0 && got.get(i) <= got.get(i - 1) && breaks.size() < 10) {
                breaks.add(got.get(i - 1) + "->" + got.get(i));
            }
        }
        Set<Integer> unexpected = new TreeSet<>(got);
        expected.forEach(unexpected::remove);
        return String.format(
                "%d rows committed, %d events received: %d rows never arrived %s, %d duplicates %s, order breaks %s,"
                        + " %d unexpected %s",
                expected.size(),
                got.size(),
                missing.size(),
                ranges(missing),
                duplicates.size(),
                duplicates.stream().limit(20).toList(),
                breaks,
                unexpected.size(),
                unexpected.stream().limit(20).toList());
    }

    /** {@code [12-40, 57]}: consecutive ids as ranges. */
    static String ranges(Set<Integer> sorted) {
        List<String> out = new ArrayList<>();
        Integer start = null;
        Integer prev = null;
        for (int id : sorted) {
            if (prev != null && id == prev + 1) {
                prev = id;
                continue;
            }
            if (start != null) {
                out.add(start.equals(prev) ? start.toString() : start + "-" + prev);
            }
            start = id;
            prev = id;
        }
        if (start != null) {
            out.add(start.equals(prev) ? start.toString() : start + "-" + prev);
        }
        return out.toString();
    }

    private static void sleep(Duration d) {
        try {
            Thread.sleep(d.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
