package dev.aura.realtime.e2e.privacy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code persist: {ttl}} with the unmodified realtime-js 2.119.2 (issue 24; docs/protocol.md):
 * a message stored with a short ttl, by {@code send} and by {@code httpSend}, is replayed before it
 * expires and not after (while its row is still in the table: the replay filters on
 * {@code expires_at}), and the janitor deletes it; a message without ttl stays.
 */
class PersistTtlE2EIT {
    private static final Duration T = Duration.ofSeconds(20);
    private static final String TOPIC = "org-acme:ttl";
    private static final int TTL_SECONDS = 6;
    private static E2eStack stack;
    private static String rt;

    @BeforeAll
    static void start() {
        // no janitor run while the replay filter is checked (its first run is a period after start)
        stack = E2eStack.start(
                PostgresServer.shared(), NatsServer.shared(), 1, Map.of("CDC_MESSAGES_JANITOR_MS", "86400000"));
        rt = stack.realtimeSchema();
        stack.awaitRealtimeSchema(T);
        stack.sql(
                "CREATE POLICY acme_reads ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                        + ".topic() LIKE 'org-acme:%' AND auth.jwt() ->> 'org' = 'acme')",
                "CREATE POLICY acme_writers ON " + rt + ".messages FOR INSERT TO aura_authenticated WITH CHECK (" + rt
                        + ".topic() LIKE 'org-acme:%' AND auth.jwt() ->> 'org' = 'acme')");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static RealtimeJsClient client() {
        Map<String, Object> claims = stack.tokens.claims("authenticated", stack.projectId);
        claims.put("sub", UUID.randomUUID().toString());
        claims.put("org", "acme");
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(
                stack.wsUrl(0),
                stack.tokens.anon(stack.projectId),
                "2.0.0",
                Map.of("accessToken", stack.tokens.withClaims(claims)));
        return js;
    }

    /** Joins {@link #TOPIC} with replay since {@code since} and returns the events replayed, once {@code count} came. */
    private static List<String> replayed(RealtimeJsClient js, String channel, long since, int count) {
        js.channel(
                channel, Map.of("private", true, "broadcast", Map.of("replay", Map.of("since", since, "limit", 25))));
        js.onBroadcast(channel, "*");
        js.subscribeAndAwait(channel, T);
        Awaitility.await().atMost(T).until(() -> replayedEvents(js).size() >= count);
        return replayedEvents(js);
    }

    private static List<String> replayedEvents(RealtimeJsClient js) {
        return js.events().stream()
                .filter(e -> "broadcast".equals(e.path("type").asText())
                        && e.at("/payload/meta/replayed").asBoolean())
                .map(e -> e.at("/payload/event").asText())
                .toList();
    }

    private String rowsOfTopic() {
        return stack.pg.queryOne(
                "SELECT string_agg(event, ',' ORDER BY seq) FROM " + rt + ".messages WHERE topic = '" + TOPIC + "'");
    }

    @Test
    void aShortTtlIsReplayedBeforeItExpiresNotAfterAndDeletedByTheJanitor() {
        long since = System.currentTimeMillis() - 1000;
        try (RealtimeJsClient writer = client();
                RealtimeJsClient before = client();
                RealtimeJsClient after = client()) {
            writer.channel(TOPIC, Map.of("private", true, "broadcast", Map.of("ack", true)));
            writer.subscribeAndAwait(TOPIC, T);
            assertThat(writer.sendPersisted(TOPIC, "short-ws", Map.of("n", 1), Map.of("ttl", TTL_SECONDS)))
                    .isEqualTo("ok");
            assertThat(writer.httpSendPersisted(TOPIC, "short-http", Map.of("n", 2), Map.of("ttl", TTL_SECONDS))
                            .path("success")
                            .asBoolean())
                    .isTrue();
            assertThat(writer.sendPersisted(TOPIC, "kept", Map.of("n", 3), true))
                    .isEqualTo("ok");
            // a ttl that is not a positive number of seconds is refused, and realtime-js returns the error
            assertThat(writer.sendPersisted(TOPIC, "bad", Map.of("n", 4), Map.of("ttl", -1)))
                    .isEqualTo("MalformedMessage: persist.ttl must be a positive number of seconds");
            assertThat(stack.pg.queryOne("SELECT string_agg(event || ':' || coalesce(round(extract(epoch FROM"
                            + " expires_at - inserted_at))::text, 'none'), ',' ORDER BY seq) FROM " + rt
                            + ".messages WHERE topic = '" + TOPIC + "'"))
                    .isEqualTo("short-ws:" + TTL_SECONDS + ",short-http:" + TTL_SECONDS + ",kept:none");

            assertThat(replayed(before, TOPIC, since, 3))
                    .as("replayed before they expire")
                    .containsExactly("short-ws", "short-http", "kept");

            Awaitility.await()
                    .atMost(T)
                    .until(() -> stack.pg
                            .queryOne("SELECT count(*) FROM " + rt + ".messages WHERE topic = '" + TOPIC
                                    + "' AND expires_at <= now()")
                            .equals("2"));
            int mark = after.eventCount();
            assertThat(replayed(after, TOPIC, since, 1)).containsExactly("kept");
            after.assertNoEvent(
                    mark,
                    e -> "broadcast".equals(e.path("type").asText())
                            && e.at("/payload/event").asText().startsWith("short"),
                    Duration.ofSeconds(2));
            assertThat(rowsOfTopic())
                    .as("still stored: the replay left them out because they expired")
                    .isEqualTo("short-ws,short-http,kept");
        }

        // the janitor deletes expired messages at its next run
        stack.cdcWorker().stop();
        stack.startCdcWorker(Map.of("CDC_MESSAGES_JANITOR_MS", "1000"), List.of());
        Awaitility.await().atMost(T).until(this::rowsOfTopic, "kept"::equals);
    }
}
