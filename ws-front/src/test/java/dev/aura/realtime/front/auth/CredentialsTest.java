package dev.aura.realtime.front.auth;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.jwk.ECKey;
import dev.aura.realtime.common.auth.ApiKeys;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.ProjectKeys;
import dev.aura.realtime.front.relay.ProjectKeysSource;
import dev.aura.realtime.front.testing.FrontFixture;
import dev.aura.realtime.testkit.MutableClock;
import dev.aura.realtime.testkit.TestSigningKeys;
import dev.aura.realtime.testkit.TestTokens;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/**
 * {@link Credentials} against a fake cdc-worker: the platform's tokens as before (kept, expiring,
 * bounded), project API keys (kinds, revocation within the cache time, floods, no worker), and
 * project token issuers (found by {@code iss}, never for another project, audience, rotation).
 */
class CredentialsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PROJECT = FrontFixture.PROJECT;
    private static final String OTHER = "0b5a6a2e-2a6d-4a49-8f4c-1d6e5a1c9f00";
    private static final String ISSUER = "https://tenant.example/auth/v1";
    private static final ECKey KEY = TestSigningKeys.es256("p-1");

    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final TestTokens tokens = FrontFixture.TOKENS.clock(clock);
    private final List<ProjectKeys.Request> asked = new CopyOnWriteArrayList<>();
    private Function<ProjectKeys.Request, CompletableFuture<ProjectKeys.Answer>> worker =
            r -> CompletableFuture.completedFuture(ProjectKeys.Answer.NONE);
    private final ProjectKeysSource source = r -> {
        asked.add(r);
        return worker.apply(r);
    };
    private final Credentials credentials = new Credentials(
            new JwtVerifier(FrontFixture.SECRET, clock), source, clock, Duration.ofSeconds(30), Duration.ofSeconds(10));

    private Claims ok(String credential) {
        CompletableFuture<Claims> f = credentials.verify(credential);
        assertThat(f).isDone();
        return f.join();
    }

    private AuthException refused(String credential) {
        CompletableFuture<Claims> f = credentials.verify(credential);
        assertThat(f).isCompletedExceptionally();
        return Credentials.refusal(f.handle((c, e) -> e).join());
    }

    // ---- the platform's tokens (VerifiedTokens) ------------------------------------------------

    @Test
    void connectionsWithTheSameTokenShareOneVerifiedClaimsAndAskNoWorker() {
        String anon = tokens.ttl(Duration.ofMinutes(10)).anon(PROJECT);
        Claims first = ok(anon);
        assertThat(ok(anon)).isSameAs(first);
        assertThat(ok(tokens.ttl(Duration.ofMinutes(10)).serviceRole(PROJECT))).isNotSameAs(first);
        assertThat(asked).as("HS256 tokens are the platform's: no question").isEmpty();
    }

    @Test
    void aKeptTokenPastItsExpiryFailsAsTheVerifierSays() {
        String anon = tokens.ttl(Duration.ofSeconds(30)).anon(PROJECT);
        ok(anon);
        clock.advance(Duration.ofSeconds(42));
        assertThat(refused(anon)).hasMessage("Token has expired 12 seconds ago");
    }

    @Test
    void aBadTokenIsNeverKept() {
        assertThat(refused("garbage")).hasMessage("The token provided is not a valid JWT");
        assertThat(refused("garbage")).hasMessage("The token provided is not a valid JWT");
    }

    /** Large valid tokens (claims of 200 KB each) are bounded in bytes, not only in count. */
    @Test
    void keptTokensAreBoundedInBytes() {
        List<String> big = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            Map<String, Object> claims =
                    new HashMap<>(tokens.ttl(Duration.ofMinutes(10)).claims("anon", PROJECT));
            claims.put("pad", i + "x".repeat(200_000));
            big.add(tokens.withClaims(claims));
        }
        Claims first = ok(big.get(0));
        for (String t : big) {
            ok(t);
        }
        assertThat(ok(big.get(29))).as("recent ones are kept").isSameAs(ok(big.get(29)));
        assertThat(ok(big.get(0)))
                .as("30 x 400 KB is over the 4 MiB bound: the first was dropped")
                .isNotSameAs(first);
    }

    // ---- project API keys ------------------------------------------------------------------------

    private void keys(Map<String, String> roleByKey) {
        Map<String, String> byHash = new HashMap<>();
        roleByKey.forEach((k, role) -> byHash.put(ApiKeys.hash(k), role));
        worker = r -> CompletableFuture.completedFuture(
                byHash.containsKey(r.apiKeyHash())
                        ? ProjectKeys.Answer.apiKey(PROJECT, byHash.get(r.apiKeyHash()))
                        : ProjectKeys.Answer.NONE);
    }

    @Test
    void aPublishableKeyActsAsAnonAndASecretKeyAsServiceRoleOfTheirProject() {
        String publishable = ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE);
        String secret = ApiKeys.generate(ApiKeys.Kind.SECRET);
        keys(Map.of(publishable, "anon", secret, "service_role"));
        Claims anon = ok(publishable);
        assertThat(anon.role()).isEqualTo("anon");
        assertThat(anon.projectId()).isEqualTo(PROJECT);
        assertThat(anon.json()).isEqualTo("{\"ref\":\"" + PROJECT + "\",\"role\":\"anon\"}");
        assertThat(anon.apiKeyHash()).isEqualTo(ApiKeys.hash(publishable));
        assertThat(ok(secret).role()).isEqualTo("service_role");
        assertThat(asked).allSatisfy(r -> assertThat(r.apiKeyHash()).hasSize(64));
        assertThat(asked.toString()).as("only hashes cross the bus").doesNotContain(publishable, secret);
    }

    @Test
    void unknownMalformedAndMislabelledKeysAreRefused() {
        String publishable = ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE);
        keys(Map.of(publishable, "service_role")); // a row whose type is not the key's prefix
        assertThat(refused(publishable).reason())
                .isEqualTo("InvalidAPIKey: Invalid API key: it is unknown or was revoked");
        assertThat(refused(ApiKeys.generate(ApiKeys.Kind.SECRET)).code()).isEqualTo(AuthException.API_KEY);
        int before = asked.size();
        assertThat(refused("sb_secret_short").code()).isEqualTo(AuthException.API_KEY);
        assertThat(refused("sb_secret_" + "x".repeat(5000)).code()).isEqualTo(AuthException.API_KEY);
        assertThat(refused("sb_secret_" + "\u00e9".repeat(40)).code()).isEqualTo(AuthException.API_KEY);
        assertThat(asked).as("malformed keys are refused without a question").hasSize(before);
    }

    @Test
    void aRevokedKeyIsRefusedOnceTheCacheTimePassedAndTheSweepSeesItAtOnce() {
        String secret = ApiKeys.generate(ApiKeys.Kind.SECRET);
        keys(Map.of(secret, "service_role"));
        ok(secret);
        keys(Map.of()); // revoked
        assertThat(ok(secret).role())
                .as("within PROJECT_KEYS_CACHE_SECONDS the kept answer stands")
                .isEqualTo("service_role");
        assertThat(credentials.stillValid(ApiKeys.hash(secret)).join())
                .as("the sweep asks now")
                .isFalse();
        assertThat(refused(secret).code()).isEqualTo(AuthException.API_KEY);
    }

    @Test
    void aKeyIsAskedAboutOnceWhileItsQuestionIsUnderWay() {
        String key = ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE);
        CompletableFuture<ProjectKeys.Answer> pending = new CompletableFuture<>();
        worker = r -> pending;
        CompletableFuture<Claims> a = credentials.verify(key);
        CompletableFuture<Claims> b = credentials.verify(key);
        assertThat(asked).hasSize(1);
        pending.complete(ProjectKeys.Answer.apiKey(PROJECT, "anon"));
        assertThat(a.join()).isSameAs(b.join());
    }

    @Test
    void withoutAWorkerAKeyIsUnavailableAndAKnownOneStandsForAWhile() {
        String known = ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE);
        keys(Map.of(known, "anon"));
        ok(known);
        worker = r -> CompletableFuture.failedFuture(new IllegalStateException("no responders"));
        clock.advance(Duration.ofSeconds(31));
        assertThat(ok(known).role())
                .as("the last answer found, within ten cache times")
                .isEqualTo("anon");
        AuthException unknown = refused(ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE));
        assertThat(unknown.unavailable()).isTrue();
        assertThat(unknown.getMessage()).isEqualTo("Could not check the API key now, try again");
        clock.advance(Duration.ofSeconds(300));
        assertThat(refused(known).unavailable()).isTrue();
        assertThat(credentials.stillValid(ApiKeys.hash(known)).join())
                .as("the sweep closes nothing it could not ask about")
                .isTrue();
    }

    // ---- project token issuers -------------------------------------------------------------------

    private void issuer(String audience, ECKey... published) {
        List<Map<String, Object>> keys = new ArrayList<>();
        for (ECKey k : published) {
            keys.add(k.toPublicJWK().toJSONObject());
        }
        worker = r -> CompletableFuture.completedFuture(
                ISSUER.equals(r.issuer())
                        ? new ProjectKeys.Answer(PROJECT, null, audience, JSON.valueToTree(Map.of("keys", keys)), null)
                        : ProjectKeys.Answer.NONE);
    }

    private String user(ECKey key, String iss, String aud, String ref) {
        Map<String, Object> c = new LinkedHashMap<>();
        long now = clock.instant().getEpochSecond();
        c.put("iss", iss);
        if (aud != null) {
            c.put("aud", aud);
        }
        c.put("sub", "9b2a2f0e-3f4e-4a5b-8c6d-7e8f9a0b1c2d");
        c.put("role", "authenticated");
        if (ref != null) {
            c.put("ref", ref);
        }
        c.put("exp", now + 600);
        return tokens.signedWith(key).withClaims(c);
    }

    @Test
    void aProviderTokenWithoutRefIsItsIssuersProjectsWithRefAdded() throws Exception {
        issuer("authenticated", KEY);
        Claims claims = ok(user(KEY, ISSUER, "authenticated", null));
        assertThat(claims.projectId()).isEqualTo(PROJECT);
        assertThat(claims.role()).isEqualTo("authenticated");
        assertThat(JSON.readTree(claims.json()).path("ref").asText()).isEqualTo(PROJECT);
        assertThat(JSON.readTree(claims.json()).path("iss").asText()).isEqualTo(ISSUER);
        assertThat(ok(user(KEY, ISSUER, "authenticated", PROJECT)).projectId()).isEqualTo(PROJECT);
    }

    @Test
    void aProjectsKeyNeverVerifiesATokenNamingAnotherProject() {
        issuer(null, KEY);
        AuthException e = refused(user(KEY, ISSUER, null, OTHER));
        assertThat(e.reason()).isEqualTo("JwtSignatureError: Failed to validate JWT signature");
        // nor under an issuer that is no project's: the platform's keys hold no such key
        assertThat(refused(user(KEY, "https://nobody.example", null, OTHER)).code())
                .isEqualTo(AuthException.SIGNATURE);
        // and a project token is never verified by the platform's HS256 secret as a project's key
        assertThat(refused(user(TestSigningKeys.es256("p-1"), ISSUER, null, null))
                        .code())
                .as("another key under the published kid")
                .isEqualTo(AuthException.SIGNATURE);
    }

    @Test
    void theAudienceMustBeTheConfiguredOne() {
        issuer("authenticated", KEY);
        assertThat(refused(user(KEY, ISSUER, "another-app", null)).reason())
                .isEqualTo("InvalidJWTToken: Field `aud` does not name the audience its issuer is configured with");
        assertThat(refused(user(KEY, ISSUER, null, null)).code()).isEqualTo(AuthException.INVALID);
    }

    @Test
    void anUnknownKidAsksForFreshKeysAtMostOncePerRefreshInterval() {
        ECKey rotated = TestSigningKeys.es256("p-2");
        issuer(null, KEY);
        ok(user(KEY, ISSUER, null, null));
        int before = asked.size();
        issuer(null, KEY, rotated); // the provider published its next key
        assertThat(ok(user(rotated, ISSUER, null, null)).projectId()).isEqualTo(PROJECT);
        assertThat(asked.subList(before, asked.size()))
                .singleElement()
                .satisfies(r -> assertThat(r.refresh()).isTrue());
        ECKey unknown = TestSigningKeys.es256("p-3");
        refused(user(unknown, ISSUER, null, null));
        refused(user(unknown, ISSUER, null, null));
        assertThat(asked.size() - before)
                .as("within the interval: answered from what is kept")
                .isEqualTo(1);
        clock.advance(Duration.ofSeconds(11));
        refused(user(unknown, ISSUER, null, null));
        assertThat(asked.size() - before).isEqualTo(2);
    }

    @Test
    void anIssuerTokenWithoutAWorkerIsUnavailableUnlessThePlatformVerifiesIt() {
        worker = r -> CompletableFuture.failedFuture(new IllegalStateException("timeout"));
        assertThat(refused(user(KEY, ISSUER, null, null)).unavailable()).isTrue();
        assertThat(refused(user(KEY, ISSUER, null, PROJECT)).code())
                .as("it names a project: the platform's keys decide")
                .isEqualTo(AuthException.SIGNATURE);
    }
}
