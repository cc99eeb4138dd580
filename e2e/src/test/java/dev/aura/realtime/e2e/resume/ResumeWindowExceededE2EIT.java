package dev.aura.realtime.e2e.resume;

import static dev.aura.realtime.e2e.resume.ResumeStack.CHANNEL;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, too late: the project's resume window is 3 s. realtime-js listens through a local
 * proxy to replica 1 while a row is inserted every 20 ms; the network drops for longer than the
 * window (the proxy closes the connection and refuses new ones), then comes back. The client
 * rejoins by itself and, after "Subscribed to PostgreSQL", is told in a {@code system} message
 * that resume is not possible (code {@code ResumeNotPossible}, reason {@code window_exceeded}):
 * it must refetch. The channel stays joined and new rows arrive live.
 */
class ResumeWindowExceededE2EIT {
    private static final int WINDOW_SECONDS = 3;

    @Test
    void aRejoinAfterTheWindowIsToldToRefetchAndGoesOnLive() throws Exception {
        try (ResumeStack s = ResumeStack.start(WINDOW_SECONDS, "(id int PRIMARY KEY)");
                SwitchableProxy proxy = new SwitchableProxy(s.stack.wsPort(0));
                RealtimeJsClient js = s.client(proxy.url(), UUID.randomUUID().toString(), Map.of());
                RowWriter writer = new RowWriter(
                        s.stack.pg,
                        id -> "INSERT INTO " + s.table() + "(id) VALUES (" + id + ")",
                        ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
            writer.awaitMore(50);
            int mark = js.eventCount();
            proxy.drop();
            Thread.sleep((WINDOW_SECONDS + 3) * 1000L); // a network drop longer than the window
            proxy.restore();
            int subscribedAt = ResumeStack.awaitRejoin(js, mark, Duration.ofSeconds(30));
            int atRejoin = writer.count();

            JsonNode system = js.awaitEvent(
                            subscribedAt,
                            e -> "system".equals(e.path("type").asText())
                                    && "ResumeNotPossible"
                                            .equals(e.path("payload")
                                                    .path("code")
                                                    .asText()),
                            ResumeStack.T)
                    .path("payload");
            assertThat(system.path("reason").asText()).isEqualTo("window_exceeded");
            assertThat(system.path("status").asText()).isEqualTo("ok");
            assertThat(system.path("extension").asText()).isEqualTo("postgres_changes");
            assertThat(system.path("message").asText()).isEqualTo("resume not possible: refetch");
            assertThat(system.path("channel").asText()).isEqualTo(CHANNEL);

            writer.awaitMore(100);
            List<Integer> committed = writer.stop();
            // live again: every row committed from a moment after the rejoin on, in order, once
            List<Integer> afterRejoin =
                    committed.stream().filter(id -> id > atRejoin + 25).toList();
            Deliveries.assertExactlyOnceInOrder(
                    js,
                    CHANNEL,
                    afterRejoin,
                    id -> id > atRejoin + 25,
                    Duration.ofSeconds(20),
                    Duration.ofSeconds(1),
                    s::logs);
            assertThat(Deliveries.resumeNotPossible(js, CHANNEL)).hasSize(1);
            js.assertNoEvent(
                    subscribedAt,
                    e -> "status".equals(e.path("type").asText())
                            && !"SUBSCRIBED".equals(e.path("status").asText()),
                    Duration.ofMillis(200));
            System.out.println("told after the window: " + system);
        }
    }
}
