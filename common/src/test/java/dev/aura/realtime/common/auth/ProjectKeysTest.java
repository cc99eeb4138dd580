package dev.aura.realtime.common.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Each project's own keys at the verifier (docs/security.md "Each project's own keys"): the API
 * keys' form, hash and claims; a project issuer's keys verify that project's tokens only, its
 * {@code iss} and {@code aud}, never HS256, and add {@code ref}.
 */
class ProjectKeysTest {
    private static final String SECRET = "unit-test-secret-unit-test-secret-0123";
    private static final String PROJECT = "11111111-2222-3333-4444-555555555555";
    private static final String OTHER = "99999999-2222-3333-4444-555555555555";
    private static final String ISSUER = "https://tenant.example/auth/v1";
    private static final Instant NOW = Instant.parse("2026-06-01T00:00:00Z");
    private static final ECKey KEY = key("p-1");

    private final JwtVerifier verifier = new JwtVerifier(SECRET, Clock.fixed(NOW, ZoneOffset.UTC));

    private static ECKey key(String kid) {
        try {
            return new ECKeyGenerator(Curve.P_256).keyID(kid).generate();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static IssuerKeys issuer(String audience) {
        return IssuerKeys.of(PROJECT, ISSUER, audience, new JWKSet(KEY));
    }

    private static String es256(ECKey key, Map<String, Object> claims) throws Exception {
        JWTClaimsSet.Builder b = new JWTClaimsSet.Builder().expirationTime(Date.from(NOW.plusSeconds(600)));
        claims.forEach(b::claim);
        SignedJWT jwt = new SignedJWT(
                new JWSHeader.Builder(JWSAlgorithm.ES256)
                        .keyID(key.getKeyID())
                        .type(JOSEObjectType.JWT)
                        .build(),
                b.build());
        jwt.sign(new ECDSASigner(key));
        return jwt.serialize();
    }

    @Test
    void apiKeysHaveTheirKindsFormAndClaims() throws Exception {
        String publishable = ApiKeys.generate(ApiKeys.Kind.PUBLISHABLE);
        String secret = ApiKeys.generate(ApiKeys.Kind.SECRET);
        assertThat(publishable).startsWith("sb_publishable_").hasSize(15 + 43);
        assertThat(ApiKeys.kindOf(publishable)).isEqualTo(ApiKeys.Kind.PUBLISHABLE);
        assertThat(ApiKeys.kindOf(secret)).isEqualTo(ApiKeys.Kind.SECRET);
        assertThat(ApiKeys.shown(secret)).isEqualTo(secret.substring(0, 14));
        for (String bad : List.of(
                "sb_secret_short",
                "sb_other_" + "a".repeat(40),
                "sb_secret_" + "a".repeat(300),
                "sb_secret_" + "a b".repeat(10),
                "eyJhbGciOiJIUzI1NiJ9.e30.x")) {
            assertThat(ApiKeys.kindOf(bad)).as(bad).isNull();
        }
        assertThat(ApiKeys.isApiKey("eyJhbGciOiJIUzI1NiJ9.e30.x")).isFalse();
        assertThat(ApiKeys.hash("sb_secret_x"))
                .hasSize(64)
                .isEqualTo(java.util.HexFormat.of().formatHex(ApiKeys.sha256("sb_secret_x")));
        Claims c = ApiKeys.claims(PROJECT, ApiKeys.Kind.SECRET, "h");
        assertThat(c.role()).isEqualTo("service_role");
        assertThat(new ObjectMapper().readTree(c.json()))
                .isEqualTo(new ObjectMapper().readTree("{\"ref\":\"" + PROJECT + "\",\"role\":\"service_role\"}"));
        assertThat(c.expiresAt()).isEqualTo(ApiKeys.NO_EXPIRY);
    }

    @Test
    void anIssuersTokenWithoutRefIsItsProjectsWithRefAdded() throws Exception {
        String token = es256(KEY, Map.of("iss", ISSUER, "aud", "authenticated", "role", "authenticated", "sub", "u1"));
        Claims c = verifier.verify(JwtVerifier.parse(token), issuer("authenticated"));
        assertThat(c.projectId()).isEqualTo(PROJECT);
        assertThat(c.all()).containsEntry("ref", PROJECT).containsEntry("iss", ISSUER);
        assertThat(new ObjectMapper().readTree(c.json()).path("ref").asText()).isEqualTo(PROJECT);
    }

    @Test
    void anIssuersKeysVerifyNothingElse() throws Exception {
        IssuerKeys keys = issuer(null);
        String sig = "JwtSignatureError: Failed to validate JWT signature";
        // another project named
        String other = es256(KEY, Map.of("iss", ISSUER, "role", "authenticated", "ref", OTHER));
        assertThatThrownBy(() -> verifier.verify(JwtVerifier.parse(other), keys))
                .isInstanceOfSatisfying(
                        AuthException.class, e -> assertThat(e.reason()).isEqualTo(sig));
        // another issuer
        String foreign = es256(KEY, Map.of("iss", "https://elsewhere.example", "role", "authenticated"));
        assertThatThrownBy(() -> verifier.verify(JwtVerifier.parse(foreign), keys))
                .isInstanceOfSatisfying(
                        AuthException.class, e -> assertThat(e.reason()).isEqualTo(sig));
        // another key under the issuer's kid
        String forged = es256(key("p-1"), Map.of("iss", ISSUER, "role", "authenticated"));
        assertThatThrownBy(() -> verifier.verify(JwtVerifier.parse(forged), keys))
                .isInstanceOfSatisfying(
                        AuthException.class, e -> assertThat(e.reason()).isEqualTo(sig));
        // HS256, even with the platform's own secret: never a project's
        SignedJWT hs = new SignedJWT(
                new JWSHeader(JWSAlgorithm.HS256),
                new JWTClaimsSet.Builder()
                        .issuer(ISSUER)
                        .claim("role", "authenticated")
                        .expirationTime(Date.from(NOW.plusSeconds(600)))
                        .build());
        hs.sign(new MACSigner(SECRET));
        assertThatThrownBy(() -> verifier.verify(JwtVerifier.parse(hs.serialize()), keys))
                .isInstanceOfSatisfying(
                        AuthException.class, e -> assertThat(e.reason()).isEqualTo(sig));
        // and the platform's keys do not hold the project's key
        String named = es256(KEY, Map.of("iss", ISSUER, "role", "authenticated", "ref", PROJECT));
        assertThatThrownBy(() -> verifier.verify(named))
                .isInstanceOfSatisfying(
                        AuthException.class, e -> assertThat(e.reason()).isEqualTo(sig));
    }

    @Test
    void theAudienceRoleAndExpiryAreChecked() throws Exception {
        IssuerKeys keys = issuer("authenticated");
        String wrongAud = es256(KEY, Map.of("iss", ISSUER, "aud", List.of("a", "b"), "role", "authenticated"));
        assertThatThrownBy(() -> verifier.verify(JwtVerifier.parse(wrongAud), keys))
                .isInstanceOfSatisfying(
                        AuthException.class,
                        e -> assertThat(e.reason())
                                .isEqualTo("InvalidJWTToken: Field `aud` does not name the audience its issuer is"
                                        + " configured with"));
        String listed = es256(KEY, Map.of("iss", ISSUER, "aud", List.of("x", "authenticated"), "role", "anon"));
        assertThat(verifier.verify(JwtVerifier.parse(listed), keys).role()).isEqualTo("anon");
        String noRole = es256(KEY, Map.of("iss", ISSUER, "aud", "authenticated"));
        assertThatThrownBy(() -> verifier.verify(JwtVerifier.parse(noRole), keys))
                .hasMessage("Fields `role` and `exp` are required in JWT");
    }
}
