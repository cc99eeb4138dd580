package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.jwk.ECKey;
import dev.aura.realtime.common.auth.ApiKeys;
import dev.aura.realtime.common.wire.ProjectKeys;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.ControlApiClient;
import dev.aura.realtime.testkit.JwksServer;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.TestSigningKeys;
import dev.aura.realtime.testkit.TestTokens;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each project's own keys in the cdc-worker (docs/security.md "Each project's own keys"): the
 * control API that makes, lists and revokes API keys and sets token issuers, and the answers to
 * ws-front's questions over NATS.
 */
class ProjectKeysIT {
    private static final ObjectMapper JSON = WireJson.mapper();
    private static CdcFixture fx;
    private static ControlApiClient api;
    private static final TestTokens tokens = TestTokens.of(CdcFixture.SECRET);
    private static final String other = UUID.randomUUID().toString();

    @BeforeAll
    static void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of("PROJECT_JWKS_PRIVATE_ADDRESSES", "true"));
        api = new ControlApiClient(fx.worker().httpPort());
        fx.createProject();
        fx.sql("INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + other + "', 'project_"
                + other.replace('-', '_') + "')");
    }

    @AfterAll
    static void tearDown() throws Exception {
        fx.close();
    }

    private static ProjectKeys.Answer ask(ProjectKeys.Request request) throws Exception {
        var msg = fx.nats.request(Subjects.PROJECT_KEYS, JSON.writeValueAsBytes(request), Duration.ofSeconds(5));
        return JSON.readValue(msg.getData(), ProjectKeys.Answer.class);
    }

    private static HttpResponse<String> call(String method, String path, String body, String key) {
        return api.call(method, "/v1/projects/" + fx.projectId + path, body, key);
    }

    @Test
    void keysAreMadeListedAnsweredAndRevoked() throws Exception {
        String service = tokens.serviceRole(fx.projectId);
        JsonNode made = JSON.readTree(api.createApiKey(fx.projectId, "secret", "backend", service));
        String key = made.path("api_key").asText();
        assertThat(ApiKeys.kindOf(key)).isEqualTo(ApiKeys.Kind.SECRET);
        assertThat(made.path("prefix").asText()).isEqualTo(ApiKeys.shown(key));
        assertThat(ask(ProjectKeys.Request.apiKey(ApiKeys.hash(key))))
                .isEqualTo(ProjectKeys.Answer.apiKey(fx.projectId, "service_role"));
        assertThat(fx.queryOne("SELECT count(*) FROM aura_platform.api_keys WHERE position('" + key.substring(10)
                        + "' in api_keys::text) > 0"))
                .isEqualTo("0");

        HttpResponse<String> list = call("GET", "/api-keys", null, service);
        assertThat(list.statusCode()).isEqualTo(200);
        assertThat(list.body())
                .contains(made.path("id").asText(), "\"revoked_at\":null")
                .doesNotContain(key);

        HttpResponse<String> revoked =
                call("DELETE", "/api-keys/" + made.path("id").asText(), null, service);
        assertThat(revoked.statusCode()).isEqualTo(200);
        assertThat(JSON.readTree(revoked.body()).path("revoked_at").isTextual()).isTrue();
        assertThat(ask(ProjectKeys.Request.apiKey(ApiKeys.hash(key)))).isEqualTo(ProjectKeys.Answer.NONE);
        assertThat(call("DELETE", "/api-keys/" + UUID.randomUUID(), null, service)
                        .statusCode())
                .isEqualTo(404);
        assertThat(ask(ProjectKeys.Request.apiKey("not-a-hash"))).isEqualTo(ProjectKeys.Answer.NONE);
    }

    @Test
    void onlyThePlatformsServiceRoleOfTheProjectManagesKeys() throws Exception {
        String body = "{\"type\":\"publishable\"}";
        assertThat(call("POST", "/api-keys", body, null).statusCode()).isEqualTo(401);
        assertThat(call("POST", "/api-keys", body, tokens.anon(fx.projectId)).statusCode())
                .isEqualTo(401);
        assertThat(call("POST", "/api-keys", body, tokens.serviceRole(other)).statusCode())
                .isEqualTo(401);
        String secret = JSON.readTree(api.createApiKey(fx.projectId, "secret", "x", tokens.serviceRole(fx.projectId)))
                .path("api_key")
                .asText();
        HttpResponse<String> byKey = call("POST", "/api-keys", body, secret);
        assertThat(byKey.statusCode()).isEqualTo(401);
        assertThat(byKey.body()).contains("do not manage keys");
        String service = tokens.serviceRole(fx.projectId);
        assertThat(call("POST", "/api-keys", "{\"type\":\"root\"}", service).statusCode())
                .isEqualTo(400);
        assertThat(call("POST", "/api-keys", "{\"type\":\"secret\",\"name\":\"" + "n".repeat(201) + "\"}", service)
                        .statusCode())
                .isEqualTo(400);
        assertThat(call("PATCH", "/api-keys", body, service).statusCode()).isEqualTo(405);
        String unknown = UUID.randomUUID().toString();
        assertThat(api.call("POST", "/v1/projects/" + unknown + "/api-keys", body, tokens.serviceRole(unknown))
                        .statusCode())
                .isEqualTo(404);
    }

    @Test
    void anIssuerIsOneProjectsAndItsKeysAreAnsweredPublicOnly() throws Exception {
        ECKey inline = TestSigningKeys.es256("in-1");
        ECKey published = TestSigningKeys.es256("url-1");
        String iss = "https://issuer.example/" + UUID.randomUUID();
        String service = tokens.serviceRole(fx.projectId);
        try (JwksServer jwks = JwksServer.start(List.of(published))) {
            String body = "{\"issuer\":\"" + iss + "\",\"audience\":\"authenticated\",\"jwks_url\":\"" + jwks.url()
                    + "\",\"jwks\":" + TestSigningKeys.publicJwks(List.of(inline)) + "}";
            HttpResponse<String> put = call("PUT", "/token-issuers", body, service);
            assertThat(put.statusCode()).as(put.body()).isEqualTo(200);

            ProjectKeys.Answer answer = ask(ProjectKeys.Request.issuer(iss, false));
            assertThat(answer.projectId()).isEqualTo(fx.projectId);
            assertThat(answer.audience()).isEqualTo("authenticated");
            assertThat(answer.error()).isNull();
            assertThat(answer.jwks().path("keys").findValuesAsText("kid")).containsExactlyInAnyOrder("in-1", "url-1");
            assertThat(answer.jwks().toString()).doesNotContain("\"d\"");

            HttpResponse<String> taken = api.call(
                    "PUT",
                    "/v1/projects/" + other + "/token-issuers",
                    "{\"issuer\":\"" + iss + "\",\"jwks_url\":\"" + jwks.url() + "\"}",
                    tokens.serviceRole(other));
            assertThat(taken.statusCode()).isEqualTo(409);
            assertThat(taken.body()).doesNotContain(fx.projectId);
            assertThat(ask(ProjectKeys.Request.issuer(iss, false)).projectId()).isEqualTo(fx.projectId);
        }
        assertThat(ask(ProjectKeys.Request.issuer("https://nobody.example", false)))
                .isEqualTo(ProjectKeys.Answer.NONE);
    }

    @Test
    void anIssuerConfigurationTheVerifierWouldMisreadIsRefused() {
        String service = tokens.serviceRole(fx.projectId);
        String privateKey = "{\"keys\":[" + TestSigningKeys.es256("p").toJSONString() + "]}";
        Map<String, String> refused = Map.of(
                "{\"issuer\":\"x\"}",
                "with jwks_url or jwks",
                "{\"issuer\":\"x\",\"jwks_url\":\"ftp://host/jwks\"}",
                "http(s) URL",
                "{\"issuer\":\"x\",\"jwks\":{\"keys\":[{\"kty\":\"oct\",\"k\":\"c2VjcmV0\"}]}}",
                "only EC",
                "{\"issuer\":\"x\",\"jwks\":" + privateKey + "}",
                "private key",
                "{\"issuer\":\"\",\"jwks_url\":\"https://h/j\"}",
                "body must be JSON",
                "{\"issuer\":\"x\",\"audience\":\"\",\"jwks_url\":\"https://h/j\"}",
                "audience must not be empty");
        refused.forEach((body, why) -> {
            HttpResponse<String> r = call("PUT", "/token-issuers", body, service);
            assertThat(r.statusCode()).as(body).isEqualTo(400);
            assertThat(r.body()).as(body).contains(why);
        });
        assertThat(fx.queryOne("SELECT count(*) FROM aura_platform.token_issuers WHERE issuer = 'x'"))
                .isEqualTo("0");
    }

    @Test
    void aRemovedIssuerIsAnsweredAsNobodysAtOnce() throws Exception {
        String service = tokens.serviceRole(fx.projectId);
        String iss = "https://removed.example/" + UUID.randomUUID();
        String body = "{\"issuer\":\"" + iss + "\",\"jwks\":"
                + TestSigningKeys.publicJwks(List.of(TestSigningKeys.es256("r-1"))) + "}";
        JsonNode set =
                JSON.readTree(call("PUT", "/token-issuers", body, service).body());
        assertThat(ask(ProjectKeys.Request.issuer(iss, false)).projectId()).isEqualTo(fx.projectId);
        String id = set.get(0).path("id").asText();
        assertThat(call("DELETE", "/token-issuers/" + id, null, service).statusCode())
                .isEqualTo(200);
        assertThat(ask(ProjectKeys.Request.issuer(iss, false))).isEqualTo(ProjectKeys.Answer.NONE);
    }
}
