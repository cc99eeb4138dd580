package dev.aura.realtime.e2e.security;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.RSAKey;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.JwksServer;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.TestSigningKeys;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 40 point 2, each project's own signing keys (docs/security.md "Each project's own keys"):
 * a project's token issuer with a JWKS URL (project A, as Supabase Auth or Clerk publish theirs)
 * or inline keys (project B), an issuer and an audience. Tokens shaped as Supabase Auth issues
 * them (no {@code ref}) work unchanged with the unmodified realtime-js; the attacks: a token of A's
 * key claiming B (as apikey, access_token, setAuth, REST), an issuer claimed by a second project,
 * a wrong audience, and JWKS URLs that never answer, dribble, or never end, while other projects
 * connect as usual.
 */
class ProjectTokenIssuersE2EIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration T = Duration.ofSeconds(15);
    private static final int CACHE_SECONDS = 2;
    private static final String ISSUER_A = "https://a-project.auth.example/auth/v1";
    private static final String ISSUER_B = "https://b-provider.example";
    private static final ECKey KEY_A = TestSigningKeys.es256("a-1");
    private static final RSAKey KEY_B = TestSigningKeys.rs256("b-1");

    private static JwksServer jwksA;
    private static E2eStack stack;
    private static String a;
    private static final String b = UUID.randomUUID().toString();
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        jwksA = JwksServer.start(List.of(KEY_A));
        Map<String, String> keys = Map.of("AURA_JWT_JWKS_CACHE_SECONDS", "4", "AURA_JWT_JWKS_MIN_REFRESH_SECONDS", "1");
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        try {
            Map<String, String> cdc = new LinkedHashMap<>(keys);
            cdc.put("PROJECT_JWKS_PRIVATE_ADDRESSES", "true"); // the test's JWKS servers are on 127.0.0.1
            cdc.put("PROJECT_JWKS_TIMEOUT_MS", "1000");
            cdc.put("PROJECT_JWKS_MAX_BYTES", "65536");
            stack.startCdcWorker(cdc, List.of());
            Map<String, String> front = new LinkedHashMap<>(keys);
            front.put("PROJECT_KEYS_CACHE_SECONDS", String.valueOf(CACHE_SECONDS));
            stack.startWsFront(front);
            stack.createProject();
            stack.createProject(b);
            a = stack.projectId;
            port = stack.wsPort(0);
            stack.awaitRealtimeSchema(T);
            stack.createEnabledTable("notes", "(id bigserial PRIMARY KEY, owner_id uuid NOT NULL, body text)");
            stack.sql(
                    "ALTER TABLE " + stack.table("notes") + " ENABLE ROW LEVEL SECURITY",
                    "CREATE POLICY own_notes ON " + stack.table("notes") + " FOR SELECT USING (owner_id = auth.uid())");
            assertThat(configure(a, issuer(ISSUER_A, "authenticated", jwksA.url(), null))
                            .statusCode())
                    .isEqualTo(200);
            assertThat(configure(b, issuer(ISSUER_B, null, null, TestSigningKeys.publicJwks(List.of(KEY_B))))
                            .statusCode())
                    .isEqualTo(200);
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
        if (jwksA != null) {
            jwksA.close();
        }
    }

    static ObjectNode issuer(String iss, String audience, String jwksUrl, String inlineJwks) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("issuer", iss);
        if (audience != null) {
            body.put("audience", audience);
        }
        if (jwksUrl != null) {
            body.put("jwks_url", jwksUrl);
        }
        if (inlineJwks != null) {
            body.set("jwks", JSON.readTree(inlineJwks));
        }
        return body;
    }

    static HttpResponse<String> configure(String project, ObjectNode body) {
        return stack.control()
                .call(
                        "PUT",
                        "/v1/projects/" + project + "/token-issuers",
                        body.toString(),
                        stack.tokens.serviceRole(project));
    }

    /** A user token as an identity provider issues it: {@code iss}, {@code aud}, {@code sub}, {@code role}, no {@code ref} unless given. */
    static String token(JWK key, String iss, String aud, String sub, String ref) {
        Map<String, Object> c = new LinkedHashMap<>();
        long now = System.currentTimeMillis() / 1000;
        c.put("iss", iss);
        if (aud != null) {
            c.put("aud", aud);
        }
        c.put("sub", sub);
        c.put("role", "authenticated");
        if (ref != null) {
            c.put("ref", ref);
        }
        c.put("iat", now);
        c.put("exp", now + 3600);
        return stack.tokens.signedWith(key).withClaims(c);
    }

    private static String user(String sub) {
        return token(KEY_A, ISSUER_A, "authenticated", sub, null);
    }

    private static RealtimeJsClient client(String apikey, Map<String, ?> options) {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(stack.wsUrl(0), apikey, "2.0.0", options);
        return js;
    }

    private static String publishable(String project) throws Exception {
        return JSON.readTree(
                        stack.control().createApiKey(project, "publishable", "web", stack.tokens.serviceRole(project)))
                .path("api_key")
                .asText();
    }

    private static JsonNode joinStatus(RealtimeJsClient js, String channel) {
        int mark = js.eventCount();
        js.channel(channel);
        js.subscribe(channel);
        return js.awaitEvent(
                mark,
                e -> "status".equals(e.path("type").asText())
                        && channel.equals(e.path("channel").asText())
                        && !"CLOSED".equals(e.path("status").asText()),
                T);
    }

    private static void joinNotes(RealtimeJsClient js, String channel) {
        js.channel(channel);
        js.onPostgresChanges(channel, Map.of("event", "INSERT", "schema", "public", "table", "notes"));
        js.onSystem(channel);
        js.subscribeAndAwait(channel, T);
        js.awaitEvent(
                e -> "system".equals(e.path("type").asText())
                        && e.path("payload").path("message").asText().contains("Subscribed to PostgreSQL"),
                T);
    }

    private static boolean insertOf(JsonNode e, String owner) {
        return "postgres_changes".equals(e.path("type").asText())
                && owner.equals(e.path("payload").path("new").path("owner_id").asText());
    }

    @Test
    void aProviderTokenWithoutRefFindsItsProjectByIssuerAndWorksUnchanged() throws Exception {
        String alice = UUID.randomUUID().toString();
        String bob = UUID.randomUUID().toString();
        try (RealtimeJsClient withKey = client(publishable(a), Map.of("accessToken", user(alice)));
                RealtimeJsClient tokenOnly = client(user(bob), Map.of())) {
            joinNotes(withKey, "notes-a");
            joinNotes(tokenOnly, "notes-a");
            stack.sql(
                    "INSERT INTO " + stack.table("notes") + "(owner_id, body) VALUES ('" + bob + "', 'bob')",
                    "INSERT INTO " + stack.table("notes") + "(owner_id, body) VALUES ('" + alice + "', 'alice')");
            withKey.awaitEvent(e -> insertOf(e, alice), T);
            tokenOnly.awaitEvent(e -> insertOf(e, bob), T);
            withKey.assertNoEvent(0, e -> insertOf(e, bob), Duration.ofMillis(300));
            tokenOnly.assertNoEvent(0, e -> insertOf(e, alice), Duration.ofMillis(300));
            assertThat(withKey.httpSend("notes-a", "rest", Map.of("n", 1)).toString())
                    .contains("\"success\":true");
        }
        // B's inline keys, no audience configured
        assertThat(Upgrades.withQueryKey(port, token(KEY_B, ISSUER_B, "anything", "u-b", null))
                        .status())
                .isEqualTo(101);
    }

    @Test
    void aKeyOfProjectANeverVerifiesATokenForProjectB() throws Exception {
        String sig = "JwtSignatureError: Failed to validate JWT signature";
        String forged = token(KEY_A, ISSUER_A, "authenticated", "mallory", b); // A's key, claiming B
        Upgrades.Answer asApikey = Upgrades.withQueryKey(port, forged);
        assertThat(asApikey.status()).isEqualTo(401);
        assertThat(asApikey.error()).isEqualTo("Failed to validate JWT signature");
        // A's key under B's issuer: B's keys decide, A's key is not among them
        assertThat(Upgrades.withQueryKey(port, token(KEY_A, ISSUER_B, null, "mallory", null))
                        .status())
                .isEqualTo(401);

        String publishableB = publishable(b);
        try (RealtimeJsClient js = client(publishableB, Map.of("accessToken", forged))) {
            JsonNode status = joinStatus(js, "forged");
            assertThat(status.path("status").asText()).as(status.toString()).isEqualTo("CHANNEL_ERROR");
            assertThat(status.toString()).contains(sig);
        }
        // A's genuine user token on B's socket: another project's
        try (RealtimeJsClient js = client(publishableB, Map.of("accessToken", user("alice")))) {
            JsonNode status = joinStatus(js, "crossing");
            assertThat(status.toString())
                    .contains("InvalidJWTToken: The access token belongs to another project than the API key");
        }
        try (RealtimeJsClient js = client(publishableB, Map.of())) {
            js.channel("set-auth");
            js.onSystem("set-auth");
            js.subscribeAndAwait("set-auth", T);
            int mark = js.eventCount();
            js.setAuth(forged);
            js.awaitEvent(
                    mark,
                    e -> "system".equals(e.path("type").asText())
                            && e.toString().contains("Failed to validate JWT signature"),
                    T);
            js.awaitStatus("set-auth", "CLOSED", T);
        }
        Upgrades.Answer rest = Upgrades.restBroadcast(port, publishableB, forged, "room", "forged");
        assertThat(rest.status()).isEqualTo(401);
        assertThat(rest.error()).isEqualTo("Failed to validate JWT signature");
        assertThat(Upgrades.restBroadcast(port, publishableB, user("alice"), "room", "crossing")
                        .status())
                .isEqualTo(401);
    }

    @Test
    void anIssuerIsOneProjectsOnly() {
        HttpResponse<String> second = configure(b, issuerQuietly(ISSUER_A, jwksA.url()));
        assertThat(second.statusCode()).isEqualTo(409);
        assertThat(second.body()).doesNotContain(a);
        String sql = "INSERT INTO aura_platform.token_issuers(project_id, issuer, jwks_url) VALUES ('" + b + "', '"
                + ISSUER_A + "', '" + jwksA.url() + "')";
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> stack.sql(sql))
                .hasMessageContaining("token_issuers_issuer_key");
        // A's tokens still open A's sockets
        assertThat(Upgrades.withQueryKey(port, user("carol")).status()).isEqualTo(101);
    }

    private static ObjectNode issuerQuietly(String iss, String url) {
        try {
            return issuer(iss, null, url, null);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void aWrongAudienceIsRefused() {
        Upgrades.Answer r = Upgrades.withQueryKey(port, token(KEY_A, ISSUER_A, "another-app", "dave", null));
        assertThat(r.status()).isEqualTo(401);
        assertThat(r.error()).contains("aud");
    }

    @Test
    void aConfigurationIsPickedUpAndRemovedWithoutARestart() throws Exception {
        String project = UUID.randomUUID().toString();
        stack.createProject(project);
        ECKey key = TestSigningKeys.es256("late-1");
        String iss = "https://late.example/" + project;
        String token = token(key, iss, null, "erin", null);
        assertThat(Upgrades.withQueryKey(port, token).status()).isEqualTo(401);
        assertThat(configure(project, issuer(iss, null, null, TestSigningKeys.publicJwks(List.of(key))))
                        .statusCode())
                .isEqualTo(200);
        Awaitility.await("a new issuer is picked up")
                .atMost(Duration.ofSeconds(CACHE_SECONDS + 3))
                .until(() -> Upgrades.withQueryKey(port, token).status() == 101);
        JsonNode listed = JSON.readTree(stack.control()
                .call("GET", "/v1/projects/" + project + "/token-issuers", null, stack.tokens.serviceRole(project))
                .body());
        String id = listed.get(0).path("id").asText();
        assertThat(stack.control()
                        .call(
                                "DELETE",
                                "/v1/projects/" + project + "/token-issuers/" + id,
                                null,
                                stack.tokens.serviceRole(project))
                        .statusCode())
                .isEqualTo(200);
        // a token verified before is kept up to a minute (docs/security.md); each try is a new token
        Awaitility.await("a removed issuer is dropped")
                .atMost(Duration.ofSeconds(CACHE_SECONDS + 3))
                .until(() -> Upgrades.withQueryKey(port, token(key, iss, null, "erin-" + UUID.randomUUID(), null))
                                .status()
                        == 401);
    }

    @Test
    void aJwksUrlThatHangsDribblesOrNeverEndsCostsOnlyItsOwnProject() throws Exception {
        try (HostileJwks silent = new HostileJwks(HostileJwks.Kind.SILENT);
                HostileJwks dribbling = new HostileJwks(HostileJwks.Kind.DRIBBLING);
                HostileJwks huge = new HostileJwks(HostileJwks.Kind.HUGE)) {
            List<String> hostileTokens = new ArrayList<>();
            for (HostileJwks h : List.of(silent, dribbling, huge)) {
                String project = UUID.randomUUID().toString();
                stack.createProject(project);
                String iss = "https://hostile.example/" + project;
                assertThat(configure(project, issuer(iss, null, h.url(), null)).statusCode())
                        .isEqualTo(200);
                hostileTokens.add(token(TestSigningKeys.es256("h-1"), iss, null, "eve", null));
            }
            // a fresh, healthy project whose first token arrives while the hostile fetches hang
            String healthy = UUID.randomUUID().toString();
            stack.createProject(healthy);
            ECKey healthyKey = TestSigningKeys.es256("ok-1");
            String healthyIss = "https://healthy.example/" + healthy;
            assertThat(configure(
                                    healthy,
                                    issuer(healthyIss, null, null, TestSigningKeys.publicJwks(List.of(healthyKey))))
                            .statusCode())
                    .isEqualTo(200);

            long started = System.nanoTime();
            List<CompletableFuture<Upgrades.Answer>> attacks = new ArrayList<>();
            ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
            for (int i = 0; i < 10; i++) {
                for (String t : hostileTokens) {
                    attacks.add(CompletableFuture.supplyAsync(() -> Upgrades.withQueryKey(port, t), clients));
                }
            }
            Thread.sleep(200); // the hostile fetches are under way
            for (int i = 0; i < 5; i++) {
                long t0 = System.nanoTime();
                assertThat(Upgrades.withQueryKey(port, token(healthyKey, healthyIss, null, "ok-" + i, null))
                                .status())
                        .isEqualTo(101);
                assertThat(Upgrades.withQueryKey(port, user("frank-" + i)).status())
                        .isEqualTo(101);
                assertThat(Duration.ofNanos(System.nanoTime() - t0))
                        .as("two healthy connects while other projects' JWKS hang")
                        .isLessThan(Duration.ofMillis(1500));
            }
            for (CompletableFuture<Upgrades.Answer> f : attacks) {
                Upgrades.Answer r = f.get();
                assertThat(r.status()).isEqualTo(401);
                assertThat(r.error()).isEqualTo("Failed to validate JWT signature");
            }
            Duration attackTime = Duration.ofNanos(System.nanoTime() - started);
            clients.close();
            assertThat(attackTime)
                    .as("30 tokens of hanging projects answered within the fetch timeout and some slack")
                    .isLessThan(Duration.ofSeconds(8));
            long seconds = attackTime.toSeconds() + 1;
            for (HostileJwks h : List.of(silent, dribbling, huge)) {
                // one fetch at a time per issuer, at most one per AURA_JWT_JWKS_MIN_REFRESH_SECONDS (1 s)
                assertThat(h.accepted()).as(h.url() + " fetches").isBetween(1, (int) seconds + 1);
            }
            Awaitility.await("the huge and the dribbling bodies were hung up on")
                    .atMost(T)
                    .until(() -> huge.hungUp() >= 1 && dribbling.hungUp() >= 1 && silent.hungUp() >= 1);
            assertThat(huge.written())
                    .as("bytes of the endless JWKS written before the fetcher stopped reading (limit 64 KiB,"
                            + " plus the sockets' buffers)")
                    .isLessThan(16L << 20);
            assertThat(stack.health(stack.cdcPort)).contains("\"cdc_active\":true");
        }
    }
}
