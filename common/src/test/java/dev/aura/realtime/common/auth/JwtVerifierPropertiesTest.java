package dev.aura.realtime.common.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Issue 9: whatever a client puts where a JWT belongs, {@link JwtVerifier} answers with claims
 * only for an untouched token signed with the secret, and otherwise throws {@link AuthException}
 * with one of its three codes (never another exception, which would escape to the event loop).
 */
class JwtVerifierPropertiesTest {
    private static final String SECRET = "property-secret-property-secret-0001";
    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");
    private static final Set<String> CODES =
            Set.of(AuthException.MALFORMED, AuthException.SIGNATURE, AuthException.INVALID);
    private final JwtVerifier verifier = new JwtVerifier(SECRET, Clock.fixed(NOW, ZoneOffset.UTC));
    private static final String VALID =
            sign(SECRET, "{\"role\":\"anon\",\"ref\":\"p1\",\"exp\":" + (NOW.getEpochSecond() + 3600) + "}");

    private static String sign(String secret, String claimsJson) {
        try {
            SignedJWT jwt = new SignedJWT(new JWSHeader(JWSAlgorithm.HS256), JWTClaimsSet.parse(claimsJson));
            jwt.sign(new MACSigner(secret.getBytes(StandardCharsets.UTF_8)));
            return jwt.serialize();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private void assertRefused(String token) {
        try {
            verifier.verify(token);
            fail("accepted " + token);
        } catch (AuthException e) {
            assertThat(e.code()).isIn(CODES);
        } catch (RuntimeException e) {
            fail("escaped as " + e + " for " + token);
        }
    }

    @Property(tries = 2000)
    void garbageIsRefusedWithAnAuthCode(@ForAll("garbage") String token) {
        assertRefused(token);
    }

    @Provide
    Arbitrary<String> garbage() {
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(200),
                Arbitraries.strings().withChars("abcXYZ019-_.=").ofMaxLength(200),
                Arbitraries.strings().withChars("eyJ.-_aA0").ofMinLength(10).ofMaxLength(300));
    }

    @Property(tries = 500)
    void everyTruncationIsRefused(@ForAll @IntRange(min = 0, max = 400) int cut) {
        assertRefused(VALID.substring(0, Math.min(cut, VALID.length() - 1)));
    }

    @Property(tries = 1000)
    void anyChangedCharacterIsRefused(@ForAll @IntRange(min = 0, max = 400) int at, @ForAll char replacement) {
        int i = at % VALID.length();
        if (VALID.charAt(i) == replacement) {
            return;
        }
        String tampered = VALID.substring(0, i) + replacement + VALID.substring(i + 1);
        try {
            Claims c = verifier.verify(tampered);
            // base64url's last character carries spare bits: a change there may decode to the same bytes
            assertThat(c.role()).isEqualTo("anon");
            assertThat(i).as("only a signature's padding bits may change").isEqualTo(VALID.length() - 1);
        } catch (AuthException e) {
            assertThat(e.code()).isIn(CODES);
        } catch (RuntimeException e) {
            fail("escaped as " + e + " for " + tampered);
        }
    }

    @Property(tries = 1000)
    void anyHeaderWithTheOriginalSignatureIsRefused(@ForAll("headers") String headerJson) {
        String[] parts = VALID.split("\\.");
        String forged = Base64URL.encode(headerJson.getBytes(StandardCharsets.UTF_8)) + "." + parts[1] + "." + parts[2];
        if (forged.equals(VALID)) {
            return;
        }
        assertRefused(forged);
    }

    @Provide
    Arbitrary<String> headers() {
        return Arbitraries.oneOf(
                Arbitraries.of(
                        "{\"alg\":\"none\"}",
                        "{\"alg\":\"RS256\"}",
                        "{\"alg\":\"HS512\"}",
                        "{\"alg\":\"HS256\",\"crit\":[\"x\"]}",
                        "{\"alg\":\"HS256\",\"typ\":\"JWT\",\"kid\":\"other\"}",
                        "{\"alg\":\"ES256\"}",
                        "{}",
                        "[]",
                        "null"),
                Arbitraries.strings().all().ofMaxLength(40));
    }

    @Property(tries = 300)
    void claimsOfAnyShapeSignedWithAnotherSecretAreRefused(@ForAll("claims") String claims) {
        try {
            assertRefused(sign("another-secret-another-secret-another-1", claims));
        } catch (IllegalStateException notAClaimsSet) {
            // nimbus refuses to build it: nothing to test
        }
    }

    @Property(tries = 300)
    void validlySignedClaimsOfAnyShapeNeverEscape(@ForAll("claims") String claims) {
        String token;
        try {
            token = sign(SECRET, claims);
        } catch (IllegalStateException notAClaimsSet) {
            return;
        }
        try {
            Claims c = verifier.verify(token);
            assertThat(c.role()).isNotBlank();
            assertThat(c.projectId()).isNotBlank();
        } catch (AuthException e) {
            assertThat(e.code()).isIn(CODES);
        } catch (RuntimeException e) {
            fail("escaped as " + e + " for claims " + claims);
        }
    }

    @Provide
    Arbitrary<String> claims() {
        Arbitrary<String> value = Arbitraries.of(
                "\"anon\"",
                "\"\"",
                "1",
                "null",
                "[]",
                "{}",
                "true",
                "\"p1\"",
                "1e400",
                "-1",
                Long.toString(NOW.getEpochSecond() + 60),
                Long.toString(NOW.getEpochSecond() - 60));
        Arbitrary<String> key = Arbitraries.of("role", "ref", "project_id", "exp", "sub", "nbf", "iat", "x");
        return net.jqwik.api.Combinators.combine(key, value)
                .as((k, v) -> "\"" + k + "\":" + v)
                .list()
                .ofMaxSize(6)
                .map(pairs -> "{" + String.join(",", pairs) + "}");
    }
}
