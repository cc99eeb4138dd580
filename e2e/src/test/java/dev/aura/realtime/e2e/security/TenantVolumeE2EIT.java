package dev.aura.realtime.e2e.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.front.config.ProjectLimitSettings;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 15: one project's client floods a ws-front running Supabase's default limits with what
 * one socket can carry (50,000 postgres_changes bindings in one join, ~5 MB presence payloads,
 * joins of 10,000 topics); another project's realtime-js client still joins and gets its rows.
 * The attacker speaks raw WebSocket frames (realtime-js would need 50,000 listener calls to
 * build that join, and caps nothing else either), the victim is a real realtime-js user.
 */
class TenantVolumeE2EIT {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = WireJson.mapper();
    private static E2eStack stack;
    private static final String victimProject = UUID.randomUUID().toString();
    private static String feed;

    @BeforeAll
    static void start() {
        stack = E2eStack.startDefault(0);
        // the testkit raises per-project limits for other tests; this replica runs the defaults
        stack.startWsFront(Map.of(
                ProjectLimitSettings.PROJECT_MAX_CONCURRENT_USERS.name(),
                        ProjectLimitSettings.PROJECT_MAX_CONCURRENT_USERS
                                .defaultText()
                                .orElseThrow(),
                ProjectLimitSettings.PROJECT_MAX_EVENTS_PER_SECOND.name(),
                        ProjectLimitSettings.PROJECT_MAX_EVENTS_PER_SECOND
                                .defaultText()
                                .orElseThrow(),
                ProjectLimitSettings.PROJECT_MAX_JOINS_PER_SECOND.name(),
                        ProjectLimitSettings.PROJECT_MAX_JOINS_PER_SECOND
                                .defaultText()
                                .orElseThrow(),
                ProjectLimitSettings.PROJECT_MAX_BYTES_PER_SECOND.name(),
                        ProjectLimitSettings.PROJECT_MAX_BYTES_PER_SECOND
                                .defaultText()
                                .orElseThrow(),
                ProjectLimitSettings.PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND.name(),
                        ProjectLimitSettings.PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND
                                .defaultText()
                                .orElseThrow()));
        stack.createProject(victimProject);
        stack.createEnabledTable(victimProject, "feed", "(id bigserial PRIMARY KEY, body text)");
        feed = "\"" + E2eStack.schemaOf(victimProject) + "\".feed";
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** A raw vsn 2.0.0 socket of the attacking project; every text message it receives, parsed. */
    private static final class Attacker implements WebSocket.Listener, AutoCloseable {
        final List<JsonNode> received = new CopyOnWriteArrayList<>();
        private final StringBuilder partial = new StringBuilder();
        final WebSocket ws;

        Attacker() throws Exception {
            ws = HttpClient.newHttpClient()
                    .newWebSocketBuilder()
                    .buildAsync(
                            URI.create("ws://127.0.0.1:" + stack.wsPort(0) + "/realtime/v1/websocket?vsn=2.0.0&apikey="
                                    + stack.tokens.anon(stack.projectId)),
                            this)
                    .get(10, TimeUnit.SECONDS);
        }

        void send(String frame) throws Exception {
            ws.sendText(frame, true).get(30, TimeUnit.SECONDS);
        }

        @Override
        public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                try {
                    received.add(JSON.readTree(partial.toString()));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                partial.setLength(0);
            }
            w.request(1);
            return null;
        }

        /** Replies to {@code ref}, any topic. */
        JsonNode replyTo(String ref) {
            Awaitility.await("reply to " + ref)
                    .atMost(WAIT)
                    .until(() ->
                            received.stream().anyMatch(f -> ref.equals(f.path(1).asText())));
            return received.stream()
                    .filter(f -> ref.equals(f.path(1).asText()))
                    .findFirst()
                    .orElseThrow();
        }

        @Override
        public void close() {
            ws.abort();
        }
    }

    private static String join(String ref, String topic, String config) {
        return "[\"" + ref + "\",\"" + ref + "\",\"" + topic + "\",\"phx_join\",{\"config\":" + config + "}]";
    }

    @Test
    void aProjectFloodingItsSocketLeavesAnotherProjectJoiningAndReceivingRows() throws Exception {
        try (Attacker attacker = new Attacker()) {
            // 1. 50,000 bindings in one 4 MB join: refused before any check or registry entry
            StringBuilder bindings = new StringBuilder("{\"postgres_changes\":[");
            for (int i = 0; i < 50_000; i++) {
                bindings.append(i == 0 ? "" : ",")
                        .append("{\"event\":\"*\",\"schema\":\"public\",\"table\":\"t\",\"filter\":\"id=eq.")
                        .append(i)
                        .append("\"}");
            }
            attacker.send(join("b1", "realtime:flood", bindings.append("]}").toString()));
            assertThat(attacker.replyTo("b1")
                            .path(4)
                            .path("response")
                            .path("reason")
                            .asText())
                    .startsWith("TooManyPostgresChangesBindings");

            // 2. presence payloads as large as a frame allows: refused, nothing tracked
            attacker.send(join("p1", "realtime:presence", "{\"presence\":{\"key\":\"k\",\"enabled\":true}}"));
            assertThat(attacker.replyTo("p1").path(4).path("status").asText()).isEqualTo("ok");
            String blob = "x".repeat(4_900_000);
            for (int i = 0; i < 3; i++) {
                attacker.send("[\"p1\",\"t" + i + "\",\"realtime:presence\",\"presence\",{\"type\":\"presence\","
                        + "\"event\":\"track\",\"payload\":{\"blob\":\"" + blob + "\"}}]");
                assertThat(attacker.replyTo("t" + i)
                                .path(4)
                                .path("response")
                                .path("reason")
                                .asText())
                        .startsWith("PayloadTooLarge");
            }

            // 3. joins of 10,000 topics as fast as the socket takes them
            for (int i = 0; i < 10_000; i++) {
                attacker.send(join("j" + i, "realtime:topic-" + i, "{}"));
            }
            attacker.send("[null,\"hb\",\"phoenix\",\"heartbeat\",{}]");

            // meanwhile, another project's user joins and gets its rows
            try (RealtimeJsClient victim = RealtimeJsClient.start()) {
                victim.connect(stack.wsUrl(0), stack.tokens.anon(victimProject), "2.0.0", Map.of());
                victim.channel("feed");
                victim.onPostgresChanges("feed", Map.of("event", "INSERT", "schema", "public", "table", "feed"));
                victim.subscribeAndAwait("feed", WAIT);
                for (int i = 0; i < 3; i++) {
                    String body = "row-" + i;
                    stack.sql("INSERT INTO " + feed + "(body) VALUES ('" + body + "')");
                    victim.awaitEvent(
                            e -> "postgres_changes".equals(e.path("type").asText())
                                    && body.equals(e.path("payload")
                                            .path("new")
                                            .path("body")
                                            .asText()),
                            WAIT);
                }
            }

            attacker.replyTo("hb");
            Awaitility.await("every join answered")
                    .atMost(WAIT)
                    .until(() -> attacker.received.stream()
                                    .filter(f -> f.path(1).asText().startsWith("j"))
                                    .count()
                            == 10_000);
            List<JsonNode> joins = attacker.received.stream()
                    .filter(f -> f.path(1).asText().startsWith("j"))
                    .toList();
            long ok = joins.stream()
                    .filter(f -> "ok".equals(f.path(4).path("status").asText()))
                    .count();
            assertThat(ok).as("channels per client").isLessThanOrEqualTo(100);
            assertThat(joins)
                    .filteredOn(f -> "error".equals(f.path(4).path("status").asText()))
                    .allSatisfy(f -> assertThat(
                                    f.path(4).path("response").path("reason").asText())
                            .matches("(ChannelRateLimitReached|ClientJoinRateLimitReached): .*"));
        }
    }
}
