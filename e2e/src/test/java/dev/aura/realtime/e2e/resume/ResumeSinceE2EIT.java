package dev.aura.realtime.e2e.resume;

import static dev.aura.realtime.e2e.resume.ResumeStack.CHANNEL;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Issue 27's explicit resume through realtime-js 2.119.2's {@code postgres_changes_options}:
 * with {@code event_id: true} each record the callback gets carries {@code _aura_event_id}; a page
 * that closed (its Node process killed: no leave) and is opened again by the same user with
 * {@code since: <the id of a row it had>} gets every row after that one, once, in commit order,
 * the ones it had already seen included, then live ones. A {@code since} older than what the
 * history holds for it is told {@code ResumeNotPossible} / {@code since_unknown}.
 */
class ResumeSinceE2EIT {
    private static final Pattern EVENT_ID = Pattern.compile("^([0-9A-F]+)/([0-9A-F]+):(\\d+)$");

    @Test
    void sinceReplaysFromTheGivenEventIdAndEventIdsReachTheCallback() throws Exception {
        String alice = UUID.randomUUID().toString();
        try (ResumeStack s = ResumeStack.start(60, "(id int PRIMARY KEY)")) {
            Map<Integer, String> firstPage = new HashMap<>();
            int since;
            RealtimeJsClient page =
                    s.client(s.stack.wsUrl(0), alice, Map.of("postgres_changes_options", Map.of("event_id", true)));
            // the writer starts once the first page listens, and goes on while the page is closed
            RowWriter writer = new RowWriter(
                    s.stack.pg,
                    id -> "INSERT INTO " + s.table() + "(id) VALUES (" + id + ")",
                    ResumeAfterReplicaKillE2EIT.EVERY_20_MS);
            try (writer) {
                try (page) {
                    writer.awaitMore(60);
                    Deliveries.assertExactlyOnceInOrder(
                            page,
                            CHANNEL,
                            writer.committed().stream().filter(id -> id <= 40).toList(),
                            id -> id <= 40,
                            Duration.ofSeconds(10),
                            Duration.ZERO,
                            s::logs);
                    long[] previous = null;
                    for (JsonNode row : Deliveries.inserts(page, CHANNEL)) {
                        String id = row.path("_aura_event_id").asText();
                        long[] parsed = parse(id);
                        if (previous != null) {
                            assertThat(compare(parsed, previous))
                                    .as("event ids grow in commit order: " + id)
                                    .isPositive();
                        }
                        previous = parsed;
                        firstPage.put(row.path("id").asInt(), id);
                    }
                    since = 20;
                } // the page is closed: its Node process is killed, the socket drops without a leave
                writer.awaitMore(50);

                String sinceId = firstPage.get(since);
                try (RealtimeJsClient reopened = s.client(
                        s.stack.wsUrl(1),
                        alice,
                        Map.of("postgres_changes_options", Map.of("since", sinceId, "event_id", true)))) {
                    writer.awaitMore(50);
                    List<Integer> committed = writer.stop();
                    List<Integer> expected =
                            committed.stream().filter(id -> id > since).toList();
                    Deliveries.assertExactlyOnceInOrder(
                            reopened, CHANNEL, expected, Duration.ofSeconds(20), Duration.ofSeconds(1), s::logs);
                    for (JsonNode row : Deliveries.inserts(reopened, CHANNEL)) {
                        String seenBefore = firstPage.get(row.path("id").asInt());
                        if (seenBefore != null) {
                            assertThat(row.path("_aura_event_id").asText())
                                    .as("a replayed row has the event id it had live")
                                    .isEqualTo(seenBefore);
                        }
                    }
                    assertThat(Deliveries.resumeNotPossible(reopened, CHANNEL)).isEmpty();
                    System.out.printf(
                            "reopened with since = %s (row %d): received rows %d..%d, %d of them seen by the first page%n",
                            sinceId,
                            since,
                            expected.getFirst(),
                            expected.getLast(),
                            expected.stream().filter(firstPage::containsKey).count());
                }

                try (RealtimeJsClient tooOld = s.client(
                        s.stack.wsUrl(0), alice, Map.of("postgres_changes_options", Map.of("since", "0/1:0")))) {
                    JsonNode system = tooOld.awaitEvent(
                                    e -> "system".equals(e.path("type").asText())
                                            && "ResumeNotPossible"
                                                    .equals(e.path("payload")
                                                            .path("code")
                                                            .asText()),
                                    ResumeStack.T)
                            .path("payload");
                    assertThat(system.path("reason").asText()).isEqualTo("since_unknown");
                    assertThat(system.path("status").asText()).isEqualTo("ok");
                    assertThat(Deliveries.ids(tooOld, CHANNEL))
                            .as("nothing replayed for an unknown since")
                            .isEmpty();
                }
            }
        }
    }

    /** {@code <commit LSN>:<ordinal>} as {LSN, ordinal}. */
    static long[] parse(String eventId) {
        Matcher m = EVENT_ID.matcher(eventId);
        assertThat(m.matches())
                .as("an event id <commit LSN>:<ordinal>: '" + eventId + "'")
                .isTrue();
        long lsn = (Long.parseLong(m.group(1), 16) << 32) | Long.parseLong(m.group(2), 16);
        return new long[] {lsn, Long.parseLong(m.group(3))};
    }

    static int compare(long[] a, long[] b) {
        int c = Long.compareUnsigned(a[0], b[0]);
        return c != 0 ? c : Long.compare(a[1], b[1]);
    }
}
