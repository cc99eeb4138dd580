package dev.aura.realtime.common.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.Map;

/**
 * Verifies client JWTs: HS256 only, signed with {@code AURA_JWT_SECRET}, with {@code role},
 * {@code exp} and {@code ref} (or {@code project_id}) present and {@code exp} in the future.
 *
 * <p>Any other algorithm (including {@code none} and RS/ES algorithms, which would otherwise
 * allow HS/RS key confusion) is refused before the signature is looked at. Error wording follows
 * Supabase Realtime ({@code lib/realtime_web/channels/auth/jwt_verification.ex} and the connect
 * errors in PROTOCOL-NOTES.md). Thread-safe.
 */
public final class JwtVerifier {
    private final MACVerifier verifier;
    private final Clock clock;

    /**
     * @param secret the HS256 secret, at least 32 bytes (RFC 7518 §3.2)
     * @throws IllegalArgumentException when the secret is shorter than 32 bytes
     */
    public JwtVerifier(String secret, Clock clock) {
        byte[] key = secret.getBytes(StandardCharsets.UTF_8);
        if (key.length < 32) {
            throw new IllegalArgumentException("AURA_JWT_SECRET must be at least 32 bytes for HS256 (RFC 7518 3.2)");
        }
        try {
            this.verifier = new MACVerifier(key);
        } catch (JOSEException e) {
            throw new IllegalArgumentException("unusable AURA_JWT_SECRET: " + e.getMessage(), e);
        }
        this.clock = clock;
    }

    /**
     * @return the verified claims
     * @throws AuthException {@code MalformedJWT} (not a JWS), {@code JwtSignatureError} (wrong
     *     algorithm or signature), {@code InvalidJWTToken} (expired, or a required claim missing)
     */
    public Claims verify(String token) throws AuthException {
        if (token == null || token.isBlank()) {
            throw new AuthException(AuthException.MALFORMED, "The token provided is not a valid JWT");
        }
        SignedJWT jwt;
        JWTClaimsSet set;
        try {
            jwt = SignedJWT.parse(token.trim());
            set = jwt.getJWTClaimsSet();
        } catch (ParseException | RuntimeException e) {
            throw new AuthException(AuthException.MALFORMED, "The token provided is not a valid JWT");
        }
        if (!JWSAlgorithm.HS256.equals(jwt.getHeader().getAlgorithm())) {
            throw new AuthException(AuthException.SIGNATURE, "Failed to validate JWT signature");
        }
        try {
            if (!jwt.verify(verifier)) {
                throw new AuthException(AuthException.SIGNATURE, "Failed to validate JWT signature");
            }
        } catch (JOSEException e) {
            throw new AuthException(AuthException.SIGNATURE, "Failed to validate JWT signature");
        }
        Object role = set.getClaim("role");
        Date exp = set.getExpirationTime();
        if (!(role instanceof String roleText) || roleText.isBlank() || exp == null) {
            throw new AuthException(AuthException.INVALID, "Fields `role` and `exp` are required in JWT");
        }
        Instant now = clock.instant();
        if (!exp.toInstant().isAfter(now)) {
            long ago = Math.max(0, Duration.between(exp.toInstant(), now).toSeconds());
            throw new AuthException(AuthException.INVALID, "Token has expired " + ago + " seconds ago");
        }
        Object ref = set.getClaim("ref");
        if (!(ref instanceof String)) {
            ref = set.getClaim("project_id");
        }
        if (!(ref instanceof String refText) || refText.isBlank()) {
            throw new AuthException(AuthException.INVALID, "Field `ref` (the project id) is required in JWT");
        }
        Map<String, Object> all = set.toJSONObject();
        String json = jwt.getPayload().toString();
        return new Claims(roleText, refText, set.getSubject(), exp.toInstant(), all, json);
    }
}
