package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Tokens, heartbeats, limits, CDC status and shutdown with the real realtime-js against the
 * jars (docs/design.md D2, D6, D8). Replicas 0 and 1 are default apart from a short CDC silence
 * timeout; replica 2 has tight limits, a 1 s idle timeout and a 2 s shutdown grace. The two
 * destructive tests run last.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SessionSurfaceE2EIT {
    private static final Duration T = Duration.ofSeconds(10);
    private static final Map<String, Object> FAST_HEARTBEAT = Map.of("heartbeatIntervalMs", 300);
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        stack.startCdcWorker(Map.of(), List.of());
        stack.startWsFront(Map.of("WS_CDC_STATUS_TIMEOUT_MS", "7000"));
        stack.startWsFront(Map.of("WS_CDC_STATUS_TIMEOUT_MS", "7000"));
        stack.startWsFront(Map.of(
                "WS_IDLE_TIMEOUT_MS",
                "1000",
                "WS_MAX_CHANNELS_PER_CONNECTION",
                "2",
                "WS_MAX_EVENTS_PER_SECOND",
                "5",
                "WS_MAX_BROADCAST_PAYLOAD_BYTES",
                "262144",
                "WS_SHUTDOWN_GRACE_SECONDS",
                "2"));
        stack.createProject();
        stack.createEnabledTable("notes", "(id bigserial PRIMARY KEY, owner_id uuid NOT NULL, body text)");
        String notes = stack.table("notes");
        stack.sql(
                "ALTER TABLE " + notes + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY own_notes ON " + notes + " FOR SELECT USING (owner_id = auth.uid())");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static boolean system(JsonNode e, String channel, String text) {
        return "system".equals(e.path("type").asText())
                && channel.equals(e.path("channel").asText())
                && e.path("payload").path("message").asText().contains(text);
    }

    private static boolean insertOf(JsonNode e, String owner) {
        return "postgres_changes".equals(e.path("type").asText())
                && owner.equals(e.path("payload").path("new").path("owner_id").asText());
    }

    private void insertNote(String owner, String body) {
        stack.sql("INSERT INTO " + stack.table("notes") + "(owner_id, body) VALUES ('" + owner + "', '" + body + "')");
    }

    @Test
    @Order(1)
    void accessTokenRefreshReachesTheCdcWorkersRlsCheckWithTheNewClaims() throws Exception {
        String alice = UUID.randomUUID().toString();
        String bob = UUID.randomUUID().toString();
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(
                    stack.wsUrl(0),
                    stack.tokens.anon(stack.projectId),
                    "2.0.0",
                    Map.of("accessToken", stack.tokens.authenticated(stack.projectId, alice)));
            js.channel("notes");
            js.onPostgresChanges("notes", Map.of("event", "INSERT", "schema", "public", "table", "notes"));
            js.onSystem("notes");
            js.subscribeAndAwait("notes", T);
            PostgresChangesE2EIT.awaitSubscribedToPostgres(js);
            insertNote(bob, "bob-1");
            insertNote(alice, "alice-1");
            js.awaitEvent(e -> insertOf(e, alice), T);
            assertThat(js.events()).noneMatch(e -> insertOf(e, bob));

            js.setAuth(stack.tokens.authenticated(stack.projectId, bob));
            // access_token has no reply: insert bob's rows until the re-put claims reach the cdc-worker
            int mark = js.eventCount();
            Waits.until(
                    "bob's row after setAuth",
                    T,
                    Duration.ofMillis(300),
                    () -> {
                        if (js.events().stream().skip(mark).anyMatch(e -> insertOf(e, bob))) {
                            return true;
                        }
                        insertNote(bob, "bob-probe");
                        return false;
                    },
                    () -> stack.cdcWorker().logTail(20));
            int after = js.eventCount();
            insertNote(alice, "alice-2");
            insertNote(bob, "bob-2");
            js.awaitEvent(
                    after,
                    e -> insertOf(e, bob)
                            && "bob-2"
                                    .equals(e.path("payload")
                                            .path("new")
                                            .path("body")
                                            .asText()),
                    T);
            js.assertNoEvent(after, e -> insertOf(e, alice), Duration.ofMillis(500));
        }
    }

    @Test
    @Order(2)
    void anExpiringTokenClosesTheChannelAndTheStaleTokenIsRefusedOnRejoin() throws Exception {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(
                    stack.wsUrl(1),
                    stack.tokens.anon(stack.projectId),
                    "2.0.0",
                    Map.of(
                            "accessToken",
                            stack.tokens.ttl(Duration.ofSeconds(2)).anon(stack.projectId)));
            js.channel("expiring");
            js.onSystem("expiring");
            js.subscribeAndAwait("expiring", T);
            JsonNode expired = js.awaitEvent(e -> system(e, "expiring", "Token has expired"), T);
            assertThat(expired.path("payload").path("status").asText()).isEqualTo("error");
            assertThat(expired.path("payload").path("message").asText()).matches("Token has expired \\d+ seconds ago");
            js.awaitStatus("expiring", "CLOSED", T);

            // a closed channel instance cannot join again: a new one rejoins with the same (now stale) token
            js.call("removeChannel", Map.of("channel", "expiring"));
            js.channel("expiring");
            js.subscribe("expiring");
            JsonNode refused = js.awaitStatus("expiring", "CHANNEL_ERROR", T);
            assertThat(refused.toString()).contains("InvalidJWTToken").contains("expired");
        }
    }

    @Test
    @Order(3)
    void heartbeatsKeepAClientAliveWhileASilentSocketIsClosedAfterTheIdleTimeout() throws Exception {
        CompletableFuture<Integer> closed = new CompletableFuture<>();
        WebSocket silent = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .buildAsync(
                        URI.create("ws://127.0.0.1:" + stack.wsPort(2) + "/realtime/v1/websocket?vsn=1.0.0&apikey="
                                + stack.tokens.anon(stack.projectId)),
                        new WebSocket.Listener() {
                            @Override
                            public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
                                closed.complete(statusCode);
                                return null;
                            }
                        })
                .get(5, TimeUnit.SECONDS);
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(2), stack.tokens.anon(stack.projectId), "2.0.0", FAST_HEARTBEAT);
            js.channel("alive");
            js.subscribeAndAwait("alive", T);
            assertThat(closed.get(5, TimeUnit.SECONDS)).isEqualTo(1001);
            Thread.sleep(1500); // > idle timeout: only heartbeats (answered) keep realtime-js connected
            assertThat(js.isConnected()).isTrue();
            assertThat(js.events())
                    .noneMatch(e -> "socket".equals(e.path("type").asText())
                            && "close".equals(e.path("event").asText()));
        } finally {
            silent.abort();
        }
    }

    @Test
    @Order(4)
    void limitsAnswerWithSupabasesWording() throws Exception {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(2), stack.tokens.anon(stack.projectId), "2.0.0", FAST_HEARTBEAT);
            js.channel("big", Map.of("broadcast", Map.of("ack", true)));
            js.subscribeAndAwait("big", T);
            assertThat(js.sendBroadcast("big", "e", Map.of("pad", "x".repeat(300_000))))
                    .isEqualTo("error");
            assertThat(js.sendBroadcast("big", "e", Map.of("small", true))).isEqualTo("ok");

            js.channel("flood");
            js.onSystem("flood");
            js.subscribeAndAwait("flood", T);
            js.channel("third");
            js.subscribe("third");
            assertThat(js.awaitStatus("third", "CHANNEL_ERROR", T).toString())
                    .contains("ChannelRateLimitReached: Too many channels");

            for (int i = 0; i < 12; i++) {
                js.sendBroadcast("flood", "spam", Map.of("i", i));
            }
            JsonNode tooMany = js.awaitEvent(e -> system(e, "flood", "Too many messages per second"), T);
            assertThat(tooMany.path("payload").path("status").asText()).isEqualTo("error");
            js.awaitStatus("flood", "CLOSED", T);
        }
    }

    @Test
    @Order(90)
    void aDeadCdcWorkerIsReportedToPostgresChangesSubscribersAndSoIsItsRecovery() throws Exception {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(1), stack.tokens.anon(stack.projectId), "2.0.0", Map.of());
            js.channel("cdc");
            js.onPostgresChanges("cdc", Map.of("event", "*", "schema", "public", "table", "notes"));
            js.onSystem("cdc");
            js.subscribeAndAwait("cdc", T);
            PostgresChangesE2EIT.awaitSubscribedToPostgres(js);
            int mark = js.eventCount();
            long killedAt = System.nanoTime();
            stack.cdcWorker().kill9();
            JsonNode down = js.awaitEvent(mark, e -> system(e, "cdc", "CdcWorkerSilent"), Duration.ofSeconds(15));
            assertThat(down.path("payload").path("status").asText()).isEqualTo("error");
            assertThat(down.path("payload").path("extension").asText()).isEqualTo("postgres_changes");
            assertThat((System.nanoTime() - killedAt) / 1_000_000_000).isLessThanOrEqualTo(13);

            int downMark = js.eventCount();
            stack.startCdcWorker(Map.of(), List.of());
            JsonNode up =
                    js.awaitEvent(downMark, e -> system(e, "cdc", "Subscribed to PostgreSQL"), Duration.ofSeconds(15));
            assertThat(up.path("payload").path("status").asText()).isEqualTo("ok");
        }
    }

    @Test
    @Order(100)
    void sigtermTellsClientsServerRequestedDisconnectAndExitsWithinTheGrace() throws Exception {
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(2), stack.tokens.anon(stack.projectId), "2.0.0", FAST_HEARTBEAT);
            js.channel("drain");
            js.onSystem("drain");
            js.subscribeAndAwait("drain", T);
            long t0 = System.nanoTime();
            stack.wsFront(2).stop();
            long stopMs = (System.nanoTime() - t0) / 1_000_000;
            JsonNode bye = js.awaitEvent(e -> system(e, "drain", "Server requested disconnect"), T);
            assertThat(bye.path("payload").path("status").asText()).isEqualTo("error");
            js.awaitStatus("drain", "CLOSED", T);
            js.awaitEvent(
                    e -> "socket".equals(e.path("type").asText())
                            && "close".equals(e.path("event").asText()),
                    T);
            assertThat(stopMs).as("SIGTERM to exit").isLessThan(2000 + 5000);
            assertThat(stack.wsFront(2).isAlive()).isFalse();
        }
    }
}
