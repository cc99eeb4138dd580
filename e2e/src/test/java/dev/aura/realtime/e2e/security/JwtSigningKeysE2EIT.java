package dev.aura.realtime.e2e.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.JwksServer;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.TestSigningKeys;
import dev.aura.realtime.testkit.TestTokens;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 24 point 1: asymmetric signing keys end to end, with the unmodified realtime-js and both
 * jars reading the keys from a JWKS URL (a local server publishing keys this test generates). An
 * ES256 user and an RS256 user (and, alone, an EdDSA one) join a private channel with postgres_changes (each gets only the
 * rows its RLS policy lets it read), broadcast over the socket and over REST ({@code httpSend});
 * the control API takes an ES256 service_role key. A rotated key: the new key is published beside
 * the old, tokens of both are accepted; once the old one is removed, its tokens are refused.
 */
class JwtSigningKeysE2EIT {
    private static final Duration T = Duration.ofSeconds(15);
    private static final ECKey ES = TestSigningKeys.es256("es-1");
    private static final RSAKey RS = TestSigningKeys.rs256("rs-1");
    private static final OctetKeyPair ED = TestSigningKeys.ed25519("ed-1");
    private static JwksServer jwks;
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        jwks = JwksServer.start(List.of(ES, RS, ED));
        // a short cache, so the removal of a key takes effect within seconds
        Map<String, String> keys = Map.of(
                "AURA_JWT_JWKS_URL", jwks.url(),
                "AURA_JWT_JWKS_CACHE_SECONDS", "2",
                "AURA_JWT_JWKS_MIN_REFRESH_SECONDS", "1");
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        try {
            stack.startCdcWorker(keys, List.of());
            stack.startWsFront(keys);
            stack.createProject();
            Awaitility.await()
                    .alias("realtime schema provisioned")
                    .atMost(T)
                    .until(() -> stack.pg
                            .queryOne("SELECT count(*) FROM aura_platform.projects WHERE project_id = '"
                                    + stack.projectId + "' AND realtime_schema_version >= 1")
                            .equals("1"));
            stack.createEnabledTable("notes", "(id bigserial PRIMARY KEY, owner_id uuid NOT NULL, body text)");
            String notes = stack.table("notes");
            String rt = "\"" + stack.schema + "_realtime\"";
            stack.sql(
                    "ALTER TABLE " + notes + " ENABLE ROW LEVEL SECURITY",
                    "CREATE POLICY own_notes ON " + notes + " FOR SELECT USING (owner_id = auth.uid())",
                    "CREATE POLICY members_read ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                            + ".topic() LIKE 'room:%' AND auth.uid() IS NOT NULL)",
                    "CREATE POLICY members_write ON " + rt + ".messages FOR INSERT TO aura_authenticated"
                            + " WITH CHECK (" + rt + ".topic() LIKE 'room:%' AND auth.uid() IS NOT NULL)");
        } catch (RuntimeException | Error e) {
            stop();
            throw e;
        }
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
        if (jwks != null) {
            jwks.close();
        }
    }

    private static TestTokens signer(JWK key) {
        return stack.tokens.signedWith(key);
    }

    /** A realtime-js client whose apikey (anon) and access token (authenticated, {@code sub}) {@code key} signs. */
    private static RealtimeJsClient client(JWK apikeyKey, JWK userKey, String sub) {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(
                stack.wsUrl(0),
                signer(apikeyKey).anon(stack.projectId),
                "2.0.0",
                Map.of("accessToken", signer(userKey).authenticated(stack.projectId, sub)));
        return js;
    }

    private static JsonNode subscribeStatus(RealtimeJsClient js, String channel) {
        int mark = js.eventCount();
        js.subscribe(channel);
        return js.awaitEvent(
                mark,
                e -> "status".equals(e.path("type").asText())
                        && channel.equals(e.path("channel").asText())
                        && !"CLOSED".equals(e.path("status").asText()),
                T);
    }

    private static void joinRoom(RealtimeJsClient js, String channel) {
        js.channel(channel, Map.of("private", true));
        js.onBroadcast(channel, "*");
        js.onPostgresChanges(channel, Map.of("event", "INSERT", "schema", "public", "table", "notes"));
        js.onSystem(channel);
        js.subscribeAndAwait(channel, T);
        JsonNode sys = js.awaitEvent(
                e -> "system".equals(e.path("type").asText())
                        && e.path("payload").path("message").asText().contains("PostgreSQL"),
                T);
        assertThat(sys.path("payload").path("status").asText()).isEqualTo("ok");
    }

    private static boolean insertOf(JsonNode e, String owner) {
        return "postgres_changes".equals(e.path("type").asText())
                && owner.equals(e.path("payload").path("new").path("owner_id").asText());
    }

    private static boolean broadcast(JsonNode e, String event) {
        return "broadcast".equals(e.path("type").asText())
                && event.equals(e.path("payload").path("event").asText());
    }

    @Test
    void anEs256UserAndAnRs256UserJoinPrivateAndPostgresChangesChannels() throws Exception {
        String alice = UUID.randomUUID().toString();
        String bob = UUID.randomUUID().toString();
        try (RealtimeJsClient es = client(ES, ES, alice);
                RealtimeJsClient rs = client(RS, RS, bob)) {
            joinRoom(es, "room:keys");
            joinRoom(rs, "room:keys");

            stack.sql(
                    "INSERT INTO " + stack.table("notes") + "(owner_id, body) VALUES ('" + bob + "', 'bob-1')",
                    "INSERT INTO " + stack.table("notes") + "(owner_id, body) VALUES ('" + alice + "', 'alice-1')");
            es.awaitEvent(e -> insertOf(e, alice), T);
            rs.awaitEvent(e -> insertOf(e, bob), T);
            es.assertNoEvent(0, e -> insertOf(e, bob), Duration.ofMillis(300));
            rs.assertNoEvent(0, e -> insertOf(e, alice), Duration.ofMillis(300));

            assertThat(es.sendBroadcast("room:keys", "from-es256", Map.of("n", 1)))
                    .isEqualTo("ok");
            rs.awaitEvent(e -> broadcast(e, "from-es256"), T);
            // REST broadcast (httpSend): apikey and Authorization both RS256
            JsonNode sent = rs.httpSend("room:keys", "from-rs256-rest", Map.of("n", 2));
            assertThat(sent.toString()).contains("\"success\":true");
            es.awaitEvent(e -> broadcast(e, "from-rs256-rest"), T);
        }
    }

    @Test
    void anEdDsaUserJoinsAndReceivesItsOwnRows() {
        String carol = UUID.randomUUID().toString();
        try (RealtimeJsClient ed = client(ED, ED, carol)) {
            joinRoom(ed, "room:eddsa");
            stack.sql("INSERT INTO " + stack.table("notes") + "(owner_id, body) VALUES ('" + carol + "', 'carol-1')");
            ed.awaitEvent(e -> insertOf(e, carol), T);
        }
    }

    @Test
    void theControlApiTakesAnEs256ServiceRoleKeyAndRefusesAForgedOne() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        URI list = URI.create("http://127.0.0.1:" + stack.cdcPort + "/v1/db/" + stack.projectId + "/realtime/tables");
        HttpResponse<String> ok = http.send(
                HttpRequest.newBuilder(list)
                        .header("Authorization", "Bearer " + signer(ES).serviceRole(stack.projectId))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(ok.body()).contains("notes");
        ECKey forger = TestSigningKeys.es256("es-1"); // the published kid, another key
        HttpResponse<String> forged = http.send(
                HttpRequest.newBuilder(list)
                        .header("Authorization", "Bearer " + signer(forger).serviceRole(stack.projectId))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(forged.statusCode()).isEqualTo(401);
        assertThat(forged.body()).contains("JwtSignatureError: Failed to validate JWT signature");
    }

    @Test
    void aRotatedKeyIsAcceptedBesideTheOldOneAndRefusedOnceRemoved() throws Exception {
        ECKey old = TestSigningKeys.es256("rot-old");
        ECKey next = TestSigningKeys.es256("rot-new");
        jwks.publish(List.of(ES, RS, ED, old));
        Thread.sleep(2_500); // the cached set expires: "rot-old" is known from the next fetch on
        try (RealtimeJsClient before = client(old, old, UUID.randomUUID().toString())) {
            joinRoom(before, "room:rotation");
        }

        // rotation: the new key is published beside the old; tokens of both are accepted
        jwks.publish(List.of(ES, RS, ED, old, next));
        Thread.sleep(1_100); // past the refresh rate limit: the unknown kid "rot-new" triggers a fetch
        try (RealtimeJsClient fresh = client(next, next, UUID.randomUUID().toString());
                RealtimeJsClient stale = client(next, old, UUID.randomUUID().toString())) {
            joinRoom(fresh, "room:rotation");
            joinRoom(stale, "room:rotation");
        }

        // the old key is removed: once the cached set expires, its tokens are refused
        jwks.publish(List.of(ES, RS, ED, next));
        Thread.sleep(2_500);
        try (RealtimeJsClient refused = client(next, old, UUID.randomUUID().toString());
                RealtimeJsClient accepted = client(next, next, UUID.randomUUID().toString())) {
            refused.channel("room:rotation", Map.of("private", true));
            JsonNode status = subscribeStatus(refused, "room:rotation");
            assertThat(status.path("status").asText()).as(status.toString()).isEqualTo("CHANNEL_ERROR");
            assertThat(status.toString()).contains("JwtSignatureError: Failed to validate JWT signature");
            joinRoom(accepted, "room:rotation");
        }
        assertThat(jwks.fetches()).as("JWKS fetches of both binaries").isLessThan(40);
    }
}
