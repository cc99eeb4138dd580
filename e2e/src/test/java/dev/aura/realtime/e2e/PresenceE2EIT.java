package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Presence with the unmodified realtime-js on two ws-front jars: {@code presence} sync, join and
 * leave events and {@code presenceState()} as Phoenix's Presence builds them from our
 * {@code presence_state}/{@code presence_diff}. No cdc-worker is needed.
 */
class PresenceE2EIT {
    private static final Duration WAIT = Duration.ofSeconds(10);
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        stack.startWsFront(Map.of());
        stack.startWsFront(Map.of());
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static RealtimeJsClient client(int replica, String key) {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(stack.wsUrl(replica), stack.tokens.anon(stack.projectId), "2.0.0", Map.of());
        js.channel("lobby", Map.of("presence", Map.of("key", key)));
        for (String event : new String[] {"sync", "join", "leave"}) {
            js.onPresence("lobby", event);
        }
        js.subscribeAndAwait("lobby", WAIT);
        return js;
    }

    private static JsonNode presence(RealtimeJsClient js, int from, String event, String key) {
        return js.awaitEvent(
                from,
                e -> "presence".equals(e.path("type").asText())
                        && event.equals(e.path("event").asText())
                        && (key == null
                                || key.equals(e.path("payload").path("key").asText())),
                WAIT);
    }

    @Test
    void joinsReTracksAndLeavesReachRealtimeJsOnTheOtherReplica() {
        try (RealtimeJsClient alice = client(0, "alice");
                RealtimeJsClient bob = client(1, "bob")) {
            presence(bob, 0, "sync", null); // presence_state on join
            int mark = bob.eventCount();
            assertThat(alice.track("lobby", Map.of("status", "online"))).isEqualTo("ok");
            JsonNode join = presence(bob, mark, "join", "alice").get("payload");
            assertThat(join.at("/newPresences/0/status").asText()).isEqualTo("online");
            assertThat(join.at("/newPresences/0/presence_ref").asText()).isNotEmpty();
            assertThat(join.at("/newPresences/0").has("phx_ref")).isFalse();
            presence(bob, mark, "sync", null);
            JsonNode state = bob.presenceState("lobby");
            assertThat(state.fieldNames()).toIterable().containsExactly("alice");
            assertThat(state.at("/alice/0/status").asText()).isEqualTo("online");

            mark = bob.eventCount();
            assertThat(alice.track("lobby", Map.of("status", "away"))).isEqualTo("ok");
            JsonNode leave = presence(bob, mark, "leave", "alice").get("payload");
            assertThat(leave.at("/leftPresences/0/status").asText()).isEqualTo("online");
            assertThat(presence(bob, mark, "join", "alice")
                            .at("/payload/newPresences/0/status")
                            .asText())
                    .isEqualTo("away");
            JsonNode afterRetrack = presence(bob, mark, "sync", null).get("state");
            assertThat(afterRetrack.get("alice"))
                    .as("re-track replaces the meta: " + afterRetrack)
                    .hasSize(1);
            assertThat(afterRetrack.at("/alice/0/status").asText()).isEqualTo("away");

            int aliceMark = alice.eventCount();
            assertThat(bob.track("lobby", Map.of("status", "here"))).isEqualTo("ok");
            presence(alice, aliceMark, "join", "bob");
            assertThat(alice.presenceState("lobby").fieldNames())
                    .toIterable()
                    .containsExactlyInAnyOrder("alice", "bob");

            mark = bob.eventCount();
            assertThat(alice.untrack("lobby")).isEqualTo("ok");
            presence(bob, mark, "leave", "alice");
            assertThat(bob.presenceState("lobby").has("alice")).isFalse();

            aliceMark = alice.eventCount();
            bob.disconnect();
            presence(alice, aliceMark, "leave", "bob");
            assertThat(alice.presenceState("lobby").size()).isZero();
        }
    }
}
