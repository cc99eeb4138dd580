package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTParser;
import com.nimbusds.jwt.SignedJWT;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.junit.jupiter.api.Test;

class TestTokensTest {
    private static final String SECRET = "testkit-secret-with-at-least-32-bytes!";
    private static final String PROJECT = "00000000-0000-0000-0000-00000000d3e0";
    private final TestTokens tokens = TestTokens.of(SECRET);

    @Test
    void anonTokenIsSignedAndCarriesRoleRefAndExp() throws Exception {
        SignedJWT jwt = SignedJWT.parse(tokens.anon(PROJECT));
        assertThat(jwt.verify(new MACVerifier(SECRET))).isTrue();
        assertThat(jwt.getJWTClaimsSet().getStringClaim("role")).isEqualTo("anon");
        assertThat(jwt.getJWTClaimsSet().getStringClaim("ref")).isEqualTo(PROJECT);
        assertThat(jwt.getJWTClaimsSet().getExpirationTime()).isAfter(java.util.Date.from(Instant.now()));
    }

    @Test
    void hostileTokensAreHostile() throws Exception {
        assertThat(JWTParser.parse(tokens.algNone(PROJECT))
                        .getHeader()
                        .getAlgorithm()
                        .getName())
                .isEqualTo("none");
        assertThat(SignedJWT.parse(tokens.signedWithWrongSecret(PROJECT)).verify(new MACVerifier(SECRET)))
                .isFalse();
        assertThat(SignedJWT.parse(tokens.tampered(PROJECT)).verify(new MACVerifier(SECRET)))
                .isFalse();
        assertThat(SignedJWT.parse(tokens.withoutExp(PROJECT)).getJWTClaimsSet().getExpirationTime())
                .isNull();
        assertThat(SignedJWT.parse(tokens.withoutRef(PROJECT)).getJWTClaimsSet().getClaim("ref"))
                .isNull();
        assertThat(SignedJWT.parse(tokens.expired("anon", PROJECT))
                        .getJWTClaimsSet()
                        .getExpirationTime())
                .isBefore(java.util.Date.from(Instant.now()));
    }

    @Test
    void tokensOfAGivenClockCountIatAndExpFromIt() throws Exception {
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        TestTokens fixed = tokens.clock(Clock.fixed(start, ZoneOffset.UTC)).ttl(Duration.ofSeconds(30));
        var claims = SignedJWT.parse(fixed.authenticated(PROJECT, "user-1")).getJWTClaimsSet();
        assertThat(claims.getIssueTime().toInstant()).isEqualTo(start);
        assertThat(claims.getExpirationTime().toInstant()).isEqualTo(start.plusSeconds(30));
        assertThat(claims.getSubject()).isEqualTo("user-1");
    }
}
