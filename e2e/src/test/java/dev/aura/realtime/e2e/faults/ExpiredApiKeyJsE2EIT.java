package dev.aura.realtime.e2e.faults;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.TestTokens;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 24 point 5 with the unmodified realtime-js 2.119.2: a client whose connect-time apikey has
 * expired subscribes to a private channel with {@code config.broadcast.replay}, without
 * {@code setAuth} or an {@code accessToken} callback.
 *
 * <p>What realtime-js sends: its {@code accessTokenValue} starts null and only {@code setAuth} or
 * the {@code accessToken} callback set it (the apikey stays in {@code params.apikey}, it is not
 * copied into the join), so the {@code phx_join} carries no {@code access_token} (checked on the
 * traced frame). ws-front then judges the join by the connect-time apikey's claims and refuses it
 * ({@code JoinFlow.expired}) with {@code InvalidJWTToken: Token has expired N seconds ago} before
 * any history is read or sent. What the user sees: the {@code subscribe} callback reports
 * {@code CHANNEL_ERROR} with an {@code Error} whose message is that reason (realtime-js joins the
 * error reply's values), no broadcast (no replayed message) reaches the channel, and realtime-js
 * keeps retrying the join on its rejoin backoff (1 s, 2 s, 5 s, ...), each retry refused the same
 * way. After {@code setAuth(freshToken)} realtime-js puts the token into the join payload and its
 * next rejoin is accepted: {@code SUBSCRIBED}, and the stored message is replayed
 * ({@code meta.replayed: true}).
 */
class ExpiredApiKeyJsE2EIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration T = Duration.ofSeconds(20);
    private static final String TOPIC = "org-acme:history";
    private static final Duration SHORT_TTL = Duration.ofSeconds(4);
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = E2eStack.startDefault(1);
        String rt = stack.realtimeSchema();
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

    /** An acme member's claims ({@code role=authenticated}, {@code org=acme}), expiring after {@code tokens}' ttl. */
    private static Map<String, Object> member(TestTokens tokens) {
        Map<String, Object> claims = new LinkedHashMap<>(tokens.claims("authenticated", stack.projectId));
        claims.put("sub", UUID.randomUUID().toString());
        claims.put("org", "acme");
        return claims;
    }

    private static boolean status(JsonNode e) {
        return "status".equals(e.path("type").asText())
                && TOPIC.equals(e.path("channel").asText());
    }

    private static boolean broadcast(JsonNode e) {
        return "broadcast".equals(e.path("type").asText());
    }

    @Test
    void subscribingAfterTheApiKeyExpiredIsRefusedWithoutHistoryUntilSetAuth() throws Exception {
        String marker = "history-" + UUID.randomUUID();
        long since = System.currentTimeMillis() - 60_000;
        Map<String, Object> replay = Map.of(
                "private", true, "broadcast", Map.of("self", true, "replay", Map.of("since", since, "limit", 10)));
        try (RealtimeJsClient writer = RealtimeJsClient.start();
                RealtimeJsClient late = RealtimeJsClient.start()) {
            // the late client connects with an apikey that expires a few seconds later
            TestTokens shortLived = stack.tokens.ttl(SHORT_TTL);
            Map<String, Object> lateClaims = member(shortLived);
            long expMs = ((Number) lateClaims.get("exp")).longValue() * 1000;
            late.call(
                    "connect",
                    Map.of(
                            "url",
                            stack.wsUrl(0),
                            "apikey",
                            shortLived.withClaims(lateClaims),
                            "vsn",
                            "2.0.0",
                            "options",
                            Map.of(),
                            "trace",
                            true));
            late.awaitEvent(
                    e -> "socket".equals(e.path("type").asText())
                            && "open".equals(e.path("event").asText()),
                    T);
            assertThat(System.currentTimeMillis())
                    .as("the socket opened before the apikey expired")
                    .isLessThan(expMs);

            // a message goes into history
            writer.connect(
                    stack.wsUrl(0),
                    stack.tokens.anon(stack.projectId),
                    "2.0.0",
                    Map.of("accessToken", stack.tokens.withClaims(member(stack.tokens))));
            writer.channel(TOPIC, Map.of("private", true, "broadcast", Map.of("ack", true)));
            writer.subscribeAndAwait(TOPIC, T);
            assertThat(writer.sendPersisted(TOPIC, "msg", Map.of("body", marker)))
                    .isEqualTo("ok");

            // the apikey expires (exp has a one-second resolution), then realtime-js subscribes with replay
            long wait = expMs + 1_500 - System.currentTimeMillis();
            if (wait > 0) {
                Thread.sleep(wait);
            }
            int mark = late.eventCount();
            late.channel(TOPIC, replay);
            late.onBroadcast(TOPIC, "*");
            late.subscribe(TOPIC);
            JsonNode refused = late.awaitEvent(mark, ExpiredApiKeyJsE2EIT::status, T);
            assertThat(refused.path("status").asText()).as(refused.toString()).isEqualTo("CHANNEL_ERROR");
            assertThat(refused.at("/error/message").asText())
                    .matches("InvalidJWTToken: Token has expired \\d+ seconds ago");

            // the join realtime-js sent carried no access_token: the refusal is the expired apikey's
            JsonNode join = late.awaitEvent(
                    mark,
                    e -> "frame".equals(e.path("type").asText())
                            && "out".equals(e.path("direction").asText())
                            && e.path("data").asText().contains("\"phx_join\"")
                            && e.path("data").asText().contains(TOPIC),
                    T);
            JsonNode joinPayload = JSON.readTree(join.path("data").asText()).path(4);
            assertThat(joinPayload.has("config")).as(joinPayload.toString()).isTrue();
            assertThat(joinPayload.has("access_token"))
                    .as(joinPayload.toString())
                    .isFalse();

            // nothing of the history arrives (realtime-js retries the join meanwhile, refused again)
            late.assertNoEvent(mark, ExpiredApiKeyJsE2EIT::broadcast, Duration.ofMillis(1_500));
            assertThat(late.events())
                    .as("no frame carries the stored message")
                    .noneMatch(e -> e.toString().contains(marker));

            // a fresh token: realtime-js's next rejoin carries it, is accepted and replays
            int beforeAuth = late.eventCount();
            late.setAuth(stack.tokens.withClaims(member(stack.tokens)));
            late.awaitEvent(
                    beforeAuth,
                    e -> status(e) && "SUBSCRIBED".equals(e.path("status").asText()),
                    T);
            JsonNode replayed = late.awaitEvent(beforeAuth, ExpiredApiKeyJsE2EIT::broadcast, T);
            assertThat(replayed.at("/payload/payload/body").asText()).isEqualTo(marker);
            assertThat(replayed.at("/payload/meta/replayed").asBoolean())
                    .as(replayed.toString())
                    .isTrue();
        }
    }
}
