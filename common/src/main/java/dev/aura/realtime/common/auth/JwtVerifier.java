package dev.aura.realtime.common.auth;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSVerifier;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.crypto.ECDSAVerifier;
import com.nimbusds.jose.crypto.Ed25519Verifier;
import com.nimbusds.jose.crypto.MACVerifier;
import com.nimbusds.jose.crypto.RSASSAVerifier;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import dev.aura.realtime.common.config.JwtSettings;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.time.Clock;
import java.util.Date;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Verifies client JWTs (docs/security.md "Signing keys"): the legacy HS256 secret
 * ({@code AURA_JWT_SECRET}, unless {@code AURA_JWT_ACCEPT_HS256=false}) and the public keys of
 * {@link JwtKeySet}: ES256 with an EC P-256 key, RS256 with an RSA key of at least 2048 bits,
 * EdDSA (or Ed25519) with an OKP Ed25519 key, chosen by the header's {@code kid}. The claims
 * {@code role}, {@code exp} and {@code ref} (or {@code project_id}) are required and {@code exp}
 * must be in the future.
 *
 * <p>Algorithm confusion is refused by construction: the header's {@code alg} names the only key
 * type (and curve) looked up, so a kid of another type finds nothing; a key whose JWK {@code alg}
 * or {@code use} says otherwise is skipped; HS256 is only ever checked against the configured
 * secret (never a public key's bytes); {@code none} is not a JWS; keys embedded in the header
 * ({@code jwk}, {@code jku}, {@code x5u}, {@code x5c}) are never used; without a {@code kid}
 * an asymmetric token is accepted only when exactly one asymmetric key is configured. Error
 * wording follows Supabase Realtime ({@code lib/realtime_web/channels/auth/jwt_verification.ex}).
 *
 * <p>These are the platform's own keys: a token they verify may name any project. A project's own
 * token issuer ({@link IssuerKeys}) verifies through {@link #verify(Token, IssuerKeys)}, for that
 * project only; which one applies to a token is the caller's choice by the token's {@code iss}
 * ({@link #parse}), docs/security.md "Each project's own keys". Thread-safe.
 */
public final class JwtVerifier {
    private static final Logger log = LoggerFactory.getLogger(JwtVerifier.class);
    private static final int MIN_RSA_BITS = 2048;
    private static final JWKMatcher ANY_ASYMMETRIC = new JWKMatcher.Builder()
            .keyTypes(KeyType.EC, KeyType.RSA, KeyType.OKP)
            .build();

    private final MACVerifier hs256;
    private final JwtKeySet keys;
    private final Clock clock;

    /**
     * HS256 only.
     *
     * @param secret the HS256 secret, at least 32 bytes (RFC 7518 §3.2)
     * @throws IllegalArgumentException when the secret is shorter than 32 bytes
     */
    public JwtVerifier(String secret, Clock clock) {
        this(JwtSettings.hs256(secret), clock);
    }

    /**
     * @throws IllegalArgumentException when the secret is shorter than 32 bytes
     * @throws dev.aura.realtime.common.config.ConfigException when a key set cannot be read
     */
    public JwtVerifier(JwtSettings settings, Clock clock) {
        byte[] key = settings.hs256Secret().getBytes(StandardCharsets.UTF_8);
        if (key.length < 32) {
            throw new IllegalArgumentException("AURA_JWT_SECRET must be at least 32 bytes for HS256 (RFC 7518 3.2)");
        }
        try {
            this.hs256 = settings.acceptHs256() ? new MACVerifier(key) : null;
        } catch (JOSEException e) {
            throw new IllegalArgumentException("unusable AURA_JWT_SECRET: " + e.getMessage(), e);
        }
        this.keys = JwtKeySet.of(settings, clock::millis);
        this.clock = clock;
        if (settings.hasKeySet() || !settings.acceptHs256()) {
            log.info("client JWT keys: {}", settings); // no secret in it
        }
    }

    /**
     * @return the verified claims
     * @throws AuthException {@code MalformedJWT} (not a JWS), {@code JwtSignatureError} (algorithm,
     *     key or signature refused), {@code InvalidJWTToken} (expired, or a required claim missing)
     */
    public Claims verify(String token) throws AuthException {
        return verify(parse(token));
    }

    /**
     * A token parsed but not verified: what decides which keys verify it (its {@code alg},
     * {@code kid}, {@code iss} and project claim).
     */
    public record Token(SignedJWT jwt, JWTClaimsSet claims) {
        /** Whether the header names ES256, RS256 or EdDSA (a project's keys verify only these). */
        public boolean asymmetric() {
            JWSAlgorithm alg = jwt.getHeader().getAlgorithm();
            return JWSAlgorithm.ES256.equals(alg)
                    || JWSAlgorithm.RS256.equals(alg)
                    || JWSAlgorithm.EdDSA.equals(alg)
                    || JWSAlgorithm.Ed25519.equals(alg);
        }

        /** The {@code iss} claim when it is a non-empty string, else null. */
        public String issuer() {
            Object iss = claims.getClaim("iss");
            return iss instanceof String text && !text.isEmpty() ? text : null;
        }

        /** The project the token names: {@code ref}, else {@code project_id}, when a non-blank string; else null. */
        public String projectClaim() {
            Object ref = claims.getClaim("ref");
            if (!(ref instanceof String)) {
                ref = claims.getClaim("project_id");
            }
            return ref instanceof String text && !text.isBlank() ? text : null;
        }
    }

    /**
     * Parses without verifying.
     *
     * @throws AuthException {@code MalformedJWT} when the text is not a JWS
     */
    public static Token parse(String token) throws AuthException {
        if (token == null || token.isBlank()) {
            throw new AuthException(AuthException.MALFORMED, "The token provided is not a valid JWT");
        }
        try {
            SignedJWT jwt = SignedJWT.parse(token.trim());
            return new Token(jwt, jwt.getJWTClaimsSet());
        } catch (ParseException | RuntimeException e) {
            throw new AuthException(AuthException.MALFORMED, "The token provided is not a valid JWT");
        }
    }

    /** Verifies {@code token} with the platform's keys (HS256 secret, {@code AURA_JWT_JWKS*}); see {@link #verify(String)}. */
    public Claims verify(Token token) throws AuthException {
        check(token, verifierFor(token.jwt().getHeader(), keys, hs256));
        String project = token.projectClaim();
        if (project == null) {
            throw new AuthException(AuthException.INVALID, "Field `ref` (the project id) is required in JWT");
        }
        return claims(
                token,
                project,
                token.claims().toJSONObject(),
                token.jwt().getPayload().toString());
    }

    /**
     * Verifies {@code token} with one project's token issuer ({@link IssuerKeys}, docs/security.md
     * "Each project's own keys"): only its asymmetric keys (never HS256, never the platform's
     * keys), its {@code iss} must be the issuer's, its {@code aud} must contain the issuer's
     * audience when one is configured, and a project claim, when the token carries one, must name
     * the issuer's project. The claims get {@code ref} = the issuer's project when the token
     * had none, so {@code auth.jwt() ->> 'ref'} and the registry see the project.
     *
     * @throws AuthException as {@link #verify(String)}; a wrong audience is {@code InvalidJWTToken}
     */
    public Claims verify(Token token, IssuerKeys issuer) throws AuthException {
        if (!token.asymmetric() || !issuer.issuer().equals(token.issuer())) {
            throw signature();
        }
        String project = token.projectClaim();
        if (project != null && !project.equals(issuer.projectId())) {
            throw signature(); // a key configured for one project never verifies a token for another
        }
        check(token, verifierFor(token.jwt().getHeader(), issuer.keySet(), null));
        if (issuer.audience() != null) {
            List<String> aud = token.claims().getAudience();
            if (aud == null || !aud.contains(issuer.audience())) {
                throw new AuthException(
                        AuthException.INVALID, "Field `aud` does not name the audience its issuer is configured with");
            }
        }
        Map<String, Object> all = token.claims().toJSONObject();
        String json = token.jwt().getPayload().toString();
        if (project == null) {
            all.put("ref", issuer.projectId());
            json = JSONObjectUtils.toJSONString(all);
        }
        return claims(token, issuer.projectId(), all, json);
    }

    /** The signature, then {@code role} and {@code exp}. */
    private void check(Token token, JWSVerifier verifier) throws AuthException {
        try {
            if (!token.jwt().verify(verifier)) {
                throw signature();
            }
        } catch (JOSEException | RuntimeException e) {
            throw signature();
        }
        Object role = token.claims().getClaim("role");
        Date exp = token.claims().getExpirationTime();
        if (!(role instanceof String roleText) || roleText.isBlank() || exp == null) {
            throw new AuthException(AuthException.INVALID, "Fields `role` and `exp` are required in JWT");
        }
        String expired = Claims.expiredMessage(exp.toInstant(), clock.instant());
        if (expired != null) {
            throw new AuthException(AuthException.INVALID, expired);
        }
    }

    private static Claims claims(Token token, String project, Map<String, Object> all, String json) {
        JWTClaimsSet set = token.claims();
        return new Claims(
                (String) set.getClaim("role"),
                project,
                set.getSubject(),
                set.getExpirationTime().toInstant(),
                all,
                json);
    }

    private static AuthException signature() {
        return new AuthException(AuthException.SIGNATURE, "Failed to validate JWT signature");
    }

    /** The verifier of the one key the header's alg and kid select; refuses everything else. */
    private static JWSVerifier verifierFor(JWSHeader header, JwtKeySet keys, MACVerifier hs256) throws AuthException {
        JWSAlgorithm alg = header.getAlgorithm();
        if (JWSAlgorithm.HS256.equals(alg)) {
            if (hs256 == null) {
                throw signature();
            }
            return hs256;
        }
        KeyType kty;
        Curve curve;
        if (JWSAlgorithm.ES256.equals(alg)) {
            kty = KeyType.EC;
            curve = Curve.P_256;
        } else if (JWSAlgorithm.RS256.equals(alg)) {
            kty = KeyType.RSA;
            curve = null;
        } else if (JWSAlgorithm.EdDSA.equals(alg) || JWSAlgorithm.Ed25519.equals(alg)) {
            kty = KeyType.OKP;
            curve = Curve.Ed25519;
        } else {
            throw signature(); // HS384/512, PS*, ES384/512, ES256K, Ed448, unknown names
        }
        if (keys.isEmpty()) {
            throw signature();
        }
        String kid = header.getKeyID();
        JWK key = kid == null ? onlyKey(keys) : keyById(keys, kid);
        if (key == null || !fits(key, kty, curve, alg)) {
            throw signature();
        }
        try {
            if (key instanceof ECKey ec) {
                return new ECDSAVerifier(ec);
            }
            if (key instanceof RSAKey rsa) {
                return new RSASSAVerifier(rsa);
            }
            if (key instanceof OctetKeyPair okp) {
                return new Ed25519Verifier(okp);
            }
        } catch (JOSEException | RuntimeException e) {
            log.debug("unusable signing key {}: {}", key.getKeyID(), e.toString());
        }
        throw signature();
    }

    /** Without a kid: the configured asymmetric key when it is the only one, else null. */
    private static JWK onlyKey(JwtKeySet keys) throws AuthException {
        List<JWK> all = select(keys, ANY_ASYMMETRIC);
        return all.size() == 1 ? all.get(0) : null;
    }

    /** The key with id {@code kid}; null when none or several (ambiguous) carry it. */
    private static JWK keyById(JwtKeySet keys, String kid) throws AuthException {
        List<JWK> found = select(
                keys,
                new JWKMatcher.Builder()
                        .keyTypes(KeyType.EC, KeyType.RSA, KeyType.OKP)
                        .keyID(kid)
                        .build());
        return found.size() == 1 ? found.get(0) : null;
    }

    private static List<JWK> select(JwtKeySet keys, JWKMatcher matcher) throws AuthException {
        try {
            return keys.select(matcher);
        } catch (KeySourceException e) {
            log.debug("signing keys unavailable: {}", e.toString());
            throw signature();
        }
    }

    /** The key is of the type and curve the token's alg needs, and its own alg and use allow it. */
    private static boolean fits(JWK key, KeyType kty, Curve curve, JWSAlgorithm alg) {
        if (!kty.equals(key.getKeyType())) {
            return false;
        }
        if (key.getKeyUse() != null && !KeyUse.SIGNATURE.equals(key.getKeyUse())) {
            return false;
        }
        if (key.getAlgorithm() != null && !key.getAlgorithm().equals(alg)) {
            boolean edNames = KeyType.OKP.equals(kty)
                    && (JWSAlgorithm.EdDSA.equals(key.getAlgorithm())
                            || JWSAlgorithm.Ed25519.equals(key.getAlgorithm()));
            if (!edNames) {
                return false;
            }
        }
        if (key instanceof ECKey ec) {
            return curve.equals(ec.getCurve());
        }
        if (key instanceof OctetKeyPair okp) {
            return curve.equals(okp.getCurve());
        }
        if (key instanceof RSAKey rsa) {
            return rsa.size() >= MIN_RSA_BITS;
        }
        return false;
    }
}
