package dev.aura.realtime.front.testing;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;

/** HS256 test tokens. */
public final class Tokens {
    public static final String SECRET = "test-secret-test-secret-test-secret-0123456789";
    public static final String PROJECT = "6f1c2a52-7c1e-4a59-9d1d-3f0d7c0a1b2c";

    private Tokens() {}

    public static String token(String project, String role, Instant expiresAt) {
        try {
            SignedJWT jwt = new SignedJWT(
                    new JWSHeader(JWSAlgorithm.HS256),
                    new JWTClaimsSet.Builder()
                            .claim("ref", project)
                            .claim("role", role)
                            .subject("user-1")
                            .expirationTime(Date.from(expiresAt))
                            .build());
            jwt.sign(new MACSigner(SECRET.getBytes(StandardCharsets.UTF_8)));
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    public static String anon(Instant expiresAt) {
        return token(PROJECT, "anon", expiresAt);
    }
}
