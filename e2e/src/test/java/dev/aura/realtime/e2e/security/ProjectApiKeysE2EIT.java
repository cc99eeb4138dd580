package dev.aura.realtime.e2e.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
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
 * Issue 40 point 2, each project's own API keys (docs/security.md "Each project's own keys"):
 * opaque {@code sb_publishable_...} (anon) and {@code sb_secret_...} (service_role) keys made
 * through the control API or the documented SQL, with the unmodified realtime-js and both jars.
 * The attacks: a key of project A used against project B as the apikey, as a join's
 * {@code access_token}, through {@code setAuth} and over REST; a revoked key, new connections and
 * live sockets alike; unknown and malformed keys; a project key managing keys.
 */
class ProjectApiKeysE2EIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration T = Duration.ofSeconds(15);
    /** ws-front asks again about a key after this (PROJECT_KEYS_CACHE_SECONDS): the revocation bound. */
    private static final int CACHE_SECONDS = 2;

    private static E2eStack stack;
    private static String a;
    private static final String b = UUID.randomUUID().toString();
    private static int port;

    @BeforeAll
    static void start() {
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        try {
            stack.startCdcWorker(Map.of(), List.of());
            stack.startWsFront(Map.of("PROJECT_KEYS_CACHE_SECONDS", String.valueOf(CACHE_SECONDS)));
            stack.createProject();
            stack.createProject(b);
            a = stack.projectId;
            port = stack.wsPort(0);
            for (String p : List.of(a, b)) {
                stack.createEnabledTable(p, "notes", "(id int PRIMARY KEY, body text)");
            }
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
    }

    /** A new key of {@code project}: the answer of {@code POST /v1/projects/<id>/api-keys}. */
    private static JsonNode newKey(String project, String type) throws Exception {
        return JSON.readTree(
                stack.control().createApiKey(project, type, "e2e " + type, stack.tokens.serviceRole(project)));
    }

    private static String key(String project, String type) throws Exception {
        return newKey(project, type).path("api_key").asText();
    }

    private static RealtimeJsClient client(String apikey, Map<String, ?> options) {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(stack.wsUrl(0), apikey, "2.0.0", options);
        return js;
    }

    private static void joinNotes(RealtimeJsClient js, String channel) {
        js.channel(channel);
        js.onBroadcast(channel, "*");
        js.onPostgresChanges(channel, Map.of("event", "INSERT", "schema", "public", "table", "notes"));
        js.onSystem(channel);
        js.subscribeAndAwait(channel, T);
        js.awaitEvent(
                e -> "system".equals(e.path("type").asText())
                        && e.path("payload").path("message").asText().contains("Subscribed to PostgreSQL"),
                T);
    }

    /** The status realtime-js reports for a join of {@code channel} that the server refuses or accepts. */
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

    private static boolean broadcast(JsonNode e, String event) {
        return "broadcast".equals(e.path("type").asText())
                && event.equals(e.path("payload").path("event").asText());
    }

    private static boolean insertOf(JsonNode e, int id) {
        return "postgres_changes".equals(e.path("type").asText())
                && e.path("payload").path("new").path("id").asInt() == id;
    }

    @Test
    void aPublishableKeyActsAsAnonAndASecretKeyAsServiceRoleAndNeitherIsStoredInClear() throws Exception {
        JsonNode created = newKey(a, "publishable");
        String publishable = created.path("api_key").asText();
        String secret = key(a, "secret");
        assertThat(publishable).startsWith("sb_publishable_");
        assertThat(secret).startsWith("sb_secret_");
        assertThat(created.path("prefix").asText()).isEqualTo(publishable.substring(0, 19));

        // the three places an apikey goes: the query, the header, and the REST apikey header
        assertThat(Upgrades.withQueryKey(port, publishable).status()).isEqualTo(101);
        assertThat(Upgrades.withHeaderKey(port, secret).status()).isEqualTo(101);
        try (RealtimeJsClient js = client(publishable, Map.of())) {
            joinNotes(js, "keys-room");
            stack.sql("INSERT INTO " + stack.table(a, "notes") + " VALUES (1, 'one')");
            js.awaitEvent(e -> insertOf(e, 1), T);
            assertThat(Upgrades.restBroadcast(port, secret, null, "keys-room", "from-secret")
                            .status())
                    .isEqualTo(202);
            js.awaitEvent(e -> broadcast(e, "from-secret"), T);
            assertThat(js.httpSend("keys-room", "from-publishable", Map.of("n", 2))
                            .toString())
                    .contains("\"success\":true");
            js.awaitEvent(e -> broadcast(e, "from-publishable"), T);
        }

        // stored hashed: the SHA-256 is there, the key's text nowhere, the listing shows prefixes only
        assertThat(stack.pg.queryOne("SELECT count(*) FROM aura_platform.api_keys WHERE project_id = '" + a
                        + "' AND key_hash = sha256(convert_to('" + publishable + "', 'UTF8'))"))
                .isEqualTo("1");
        String random = secret.substring("sb_secret_".length());
        assertThat(stack.pg.queryOne("SELECT count(*) FROM aura_platform.api_keys k WHERE position('" + random
                        + "' in k::text) > 0"))
                .isEqualTo("0");
        HttpResponse<String> list =
                stack.control().call("GET", "/v1/projects/" + a + "/api-keys", null, stack.tokens.serviceRole(a));
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.body())
                .contains(created.path("id").asText(), "\"type\":\"secret\"", "\"type\":\"publishable\"")
                .doesNotContain(publishable, random);
    }

    @Test
    void aKeyOfProjectAIsRefusedForProjectB() throws Exception {
        String secretA = key(a, "secret");
        String publishableB = key(b, "publishable");
        String mismatch = "InvalidJWTToken: The access token belongs to another project than the API key";

        try (RealtimeJsClient victim = client(publishableB, Map.of());
                RealtimeJsClient owner = client(key(a, "publishable"), Map.of())) {
            joinNotes(victim, "shared-name");
            joinNotes(owner, "shared-name");

            // as the join's access_token (realtime-js's accessToken option) on B's socket
            try (RealtimeJsClient js = client(publishableB, Map.of("accessToken", secretA))) {
                JsonNode status = joinStatus(js, "crossing");
                assertThat(status.path("status").asText()).as(status.toString()).isEqualTo("CHANNEL_ERROR");
                assertThat(status.toString()).contains(mismatch);
            }
            // through setAuth on a joined channel of B
            try (RealtimeJsClient js = client(publishableB, Map.of())) {
                js.channel("set-auth");
                js.onSystem("set-auth");
                js.subscribeAndAwait("set-auth", T);
                int mark = js.eventCount();
                js.setAuth(secretA);
                js.awaitEvent(
                        mark,
                        e -> "system".equals(e.path("type").asText())
                                && e.toString().contains(mismatch),
                        T);
                js.awaitStatus("set-auth", "CLOSED", T);
            }
            // over REST: B's apikey with A's key as the user token
            Upgrades.Answer rest = Upgrades.restBroadcast(port, publishableB, secretA, "shared-name", "crossed");
            assertThat(rest.status()).isEqualTo(401);
            assertThat(rest.error()).isEqualTo(mismatch);

            // as the apikey: A's key reaches A's channels, never B's of the same name
            assertThat(Upgrades.restBroadcast(port, secretA, null, "shared-name", "a-only")
                            .status())
                    .isEqualTo(202);
            owner.awaitEvent(e -> broadcast(e, "a-only"), T);
            try (RealtimeJsClient js = client(secretA, Map.of())) {
                joinNotes(js, "shared-name");
                assertThat(js.sendBroadcast("shared-name", "a-socket", Map.of("n", 1)))
                        .isEqualTo("ok");
                owner.awaitEvent(e -> broadcast(e, "a-socket"), T);
                stack.sql("INSERT INTO " + stack.table(b, "notes") + " VALUES (7, 'b only')");
                victim.awaitEvent(e -> insertOf(e, 7), T);
                js.assertNoEvent(0, e -> insertOf(e, 7), Duration.ofMillis(500));
            }
            victim.assertNoEvent(
                    0,
                    e -> broadcast(e, "a-only") || broadcast(e, "a-socket") || broadcast(e, "crossed"),
                    Duration.ZERO);
        }
    }

    @Test
    void aRevokedKeyOpensNothingAndItsLiveSocketsAreClosedWithinTheCacheTime() throws Exception {
        JsonNode created = newKey(a, "secret");
        String secret = created.path("api_key").asText();
        try (RealtimeJsClient live = client(secret, Map.of())) {
            joinNotes(live, "revoked-room");
            int mark = live.eventCount();
            HttpResponse<String> revoked = stack.control()
                    .call(
                            "DELETE",
                            "/v1/projects/" + a + "/api-keys/"
                                    + created.path("id").asText(),
                            null,
                            stack.tokens.serviceRole(a));
            assertThat(revoked.statusCode()).as(revoked.body()).isEqualTo(200);
            long revokedAt = System.nanoTime();

            Awaitility.await("new connections with the revoked key refused")
                    .atMost(Duration.ofSeconds(CACHE_SECONDS + 3))
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> Upgrades.withQueryKey(port, secret).status() == 401);
            assertThat(Upgrades.withQueryKey(port, secret).error()).startsWith("Invalid API key");
            assertThat(Upgrades.restBroadcast(port, secret, null, "revoked-room", "x")
                            .status())
                    .isEqualTo(401);
            live.awaitEvent(
                    mark,
                    e -> "socket".equals(e.path("type").asText())
                            && "close".equals(e.path("event").asText()),
                    Duration.ofSeconds(CACHE_SECONDS * 2L + 3));
            assertThat(Duration.ofNanos(System.nanoTime() - revokedAt))
                    .as("a live socket of a revoked key is closed within twice the cache time")
                    .isLessThan(Duration.ofSeconds(CACHE_SECONDS * 2L + 3));
        }
        HttpResponse<String> list =
                stack.control().call("GET", "/v1/projects/" + a + "/api-keys", null, stack.tokens.serviceRole(a));
        JsonNode listed = null;
        for (JsonNode k : JSON.readTree(list.body())) {
            if (k.path("id").asText().equals(created.path("id").asText())) {
                listed = k;
            }
        }
        assertThat(listed).isNotNull();
        assertThat(listed.path("revoked_at").isTextual()).as(list.body()).isTrue();
    }

    @Test
    void aKeyMadeAndRevokedWithTheDocumentedSqlWorks() {
        // docs/operations.md, "Project API keys and token issuers": the same SQL, verbatim
        String key = stack.pg.queryOne("""
                WITH k AS (SELECT 'sb_secret_' || replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', '') AS api_key)
                INSERT INTO aura_platform.api_keys(project_id, type, name, prefix, key_hash)
                SELECT '%s', 'secret', 'backend', left(api_key, 14), sha256(convert_to(api_key, 'UTF8')) FROM k
                RETURNING (SELECT api_key FROM k)""".formatted(a));
        assertThat(Upgrades.withQueryKey(port, key).status()).isEqualTo(101);
        stack.sql("UPDATE aura_platform.api_keys SET revoked_at = now() WHERE key_hash = sha256(convert_to('" + key
                + "', 'UTF8'))");
        Awaitility.await("the key revoked by SQL is refused")
                .atMost(Duration.ofSeconds(CACHE_SECONDS + 3))
                .until(() -> Upgrades.withQueryKey(port, key).status() == 401);
    }

    @Test
    void unknownMalformedAndMisusedKeysAreRefused() throws Exception {
        String unknown = "sb_publishable_" + UUID.randomUUID().toString().replace("-", "");
        Upgrades.Answer refused = Upgrades.withQueryKey(port, unknown);
        assertThat(refused.status()).isEqualTo(401);
        assertThat(refused.error()).startsWith("Invalid API key");
        assertThat(Upgrades.withQueryKey(port, "sb_secret_short").status()).isEqualTo(401);
        assertThat(Upgrades.withHeaderKey(port, "sb_secret_" + "x".repeat(5000)).status())
                .isEqualTo(401);
        assertThat(Upgrades.restBroadcast(port, unknown, null, "x", "y").status())
                .isEqualTo(401);

        // keys are for clients: a project's key manages no keys, A's service role none of B's
        String secretA = key(a, "secret");
        assertThat(stack.control()
                        .call("GET", "/v1/projects/" + a + "/api-keys", null, secretA)
                        .statusCode())
                .isEqualTo(401);
        assertThat(stack.control()
                        .call(
                                "POST",
                                "/v1/projects/" + b + "/api-keys",
                                "{\"type\":\"secret\",\"name\":\"x\"}",
                                stack.tokens.serviceRole(a))
                        .statusCode())
                .isEqualTo(401);
        assertThatThrownBy(() -> stack.control().createApiKey(a, "root", "x", stack.tokens.serviceRole(a)))
                .hasMessageContaining("400");
    }
}
