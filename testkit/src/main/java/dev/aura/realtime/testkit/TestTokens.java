package dev.aura.realtime.testkit;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.Ed25519Signer;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.PlainJWT;
import com.nimbusds.jwt.SignedJWT;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Mints HS256 JWTs shaped like Aurabase API keys and user tokens, plus hostile variants; with
 * {@link #signedWith(JWK)} the same tokens are signed with an asymmetric key (ES256, RS256 or
 * EdDSA, {@code kid} in the header; keys from {@link TestSigningKeys}).
 *
 * <p>Every well-formed token carries {@code role}, {@code ref} (the project id), {@code iss}
 * ({@code "aura-test"}), {@code iat} and {@code exp} (now + {@link #ttl(Duration) ttl}, default one
 * hour; "now" is the system clock unless {@link #clock(Clock)} gives another). Instances are
 * immutable and thread-safe.
 *
 * <pre>{@code
 * TestTokens tokens = TestTokens.of(secret);
 * String anonKey = tokens.anon(projectId);
 * String user = tokens.authenticated(projectId, "6f1c...");
 * String forged = tokens.signedWithWrongSecret(projectId);
 * }</pre>
 */
public final class TestTokens {
    /** Value of the {@code iss} claim of every token minted here. */
    public static final String ISSUER = "aura-test";

    private final byte[] secret;
    private final Duration ttl;
    private final Clock clock;
    /** The private key tokens are signed with, or null for HS256 with {@link #secret}. */
    private final JWK key;

    private TestTokens(byte[] secret, Duration ttl, Clock clock) {
        this(secret, ttl, clock, null);
    }

    private TestTokens(byte[] secret, Duration ttl, Clock clock, JWK key) {
        this.secret = secret;
        this.ttl = ttl;
        this.clock = clock;
        this.key = key;
    }

    /**
     * Returns a copy signing with the private key {@code key}: ES256 for an EC key, RS256 for RSA,
     * EdDSA for an Ed25519 key, its {@code kid} in the header (none when the key has none).
     */
    public TestTokens signedWith(JWK key) {
        if (!key.isPrivate()) {
            throw new IllegalArgumentException("signedWith needs a private key");
        }
        return new TestTokens(secret, ttl, clock, key);
    }

    /**
     * Returns a minter signing with {@code secret} (UTF-8 bytes, the way the binaries read
     * {@code AURA_JWT_SECRET}).
     *
     * @throws IllegalArgumentException if the secret is shorter than 32 bytes (HS256 needs 256 bits)
     */
    public static TestTokens of(String secret) {
        byte[] bytes = secret.getBytes(StandardCharsets.UTF_8);
        if (bytes.length < 32) {
            throw new IllegalArgumentException("HS256 secret must be at least 32 bytes, got " + bytes.length);
        }
        return new TestTokens(bytes, Duration.ofHours(1), Clock.systemUTC());
    }

    /** Returns a copy whose tokens expire {@code ttl} after minting (may be negative for expired tokens). */
    public TestTokens ttl(Duration ttl) {
        return new TestTokens(secret, ttl, clock, key);
    }

    /**
     * Returns a copy that reads "now" ({@code iat}, and {@code exp} = now + ttl) from {@code clock},
     * for tests whose verifier runs on a clock they move by hand.
     */
    public TestTokens clock(Clock clock) {
        return new TestTokens(secret, ttl, clock, key);
    }

    /** An anon API key for the project: {@code role=anon}. */
    public String anon(String projectId) {
        return sign(claims("anon", projectId));
    }

    /** A signed-in user's token: {@code role=authenticated}, {@code aud=authenticated}, {@code sub}. */
    public String authenticated(String projectId, String sub) {
        Map<String, Object> claims = claims("authenticated", projectId);
        claims.put("sub", sub);
        claims.put("aud", "authenticated");
        return sign(claims);
    }

    /** A service key for the project: {@code role=service_role} (bypasses RLS). */
    public String serviceRole(String projectId) {
        return sign(claims("service_role", projectId));
    }

    /** A correctly signed token with the given role whose {@code exp} lies one minute in the past. */
    public String expired(String role, String projectId) {
        Map<String, Object> claims = claims(role, projectId);
        long now = clock.instant().getEpochSecond();
        claims.put("iat", now - 3600);
        claims.put("exp", now - 60);
        return sign(claims);
    }

    /**
     * Signs exactly {@code claims} (no defaults added). Values may be strings, numbers, booleans,
     * lists or maps; {@code exp}/{@code iat}/{@code nbf} are epoch seconds.
     */
    public String withClaims(Map<String, ?> claims) {
        return sign(claims);
    }

    /**
     * Returns the default claims for a role and project, as a mutable map to tweak and pass to
     * {@link #withClaims(Map)} or {@link #unsigned(Map)}.
     */
    public Map<String, Object> claims(String role, String projectId) {
        Map<String, Object> claims = new LinkedHashMap<>();
        long now = clock.instant().getEpochSecond();
        claims.put("iss", ISSUER);
        claims.put("role", role);
        claims.put("ref", projectId);
        claims.put("iat", now);
        claims.put("exp", now + ttl.toSeconds());
        return claims;
    }

    // ---- hostile tokens ----------------------------------------------------------------------

    /** An unsecured JWT ({@code "alg":"none"}, empty signature) carrying {@code claims}. */
    public String unsigned(Map<String, ?> claims) {
        return new PlainJWT(toClaimsSet(claims)).serialize();
    }

    /** An anon token with header {@code alg: none} and no signature. */
    public String algNone(String projectId) {
        return unsigned(claims("anon", projectId));
    }

    /** A well-formed anon token signed with a different 32-byte secret. */
    public String signedWithWrongSecret(String projectId) {
        return new TestTokens("a-different-secret-that-is-32-bytes!!".getBytes(StandardCharsets.UTF_8), ttl, clock)
                .anon(projectId);
    }

    /** An anon token without {@code exp}. */
    public String withoutExp(String projectId) {
        return without("exp", projectId);
    }

    /** A token without {@code role}. */
    public String withoutRole(String projectId) {
        return without("role", projectId);
    }

    /** A token with {@code role=anon} but without {@code ref}. */
    public String withoutRef(String projectId) {
        return without("ref", projectId);
    }

    /** An anon token whose payload was altered after signing (signature no longer matches). */
    public String tampered(String projectId) {
        String[] parts = anon(projectId).split("\\.");
        Map<String, Object> forged = claims("service_role", projectId);
        String payload = java.util.Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(toClaimsSet(forged).toString().getBytes(StandardCharsets.UTF_8));
        return parts[0] + "." + payload + "." + parts[2];
    }

    private String without(String claim, String projectId) {
        Map<String, Object> claims = claims("anon", projectId);
        claims.remove(claim);
        return sign(claims);
    }

    private String sign(Map<String, ?> claims) {
        try {
            JWSAlgorithm alg;
            JWSSigner signer;
            if (key == null) {
                alg = JWSAlgorithm.HS256;
                signer = new MACSigner(secret);
            } else if (key instanceof ECKey ec) {
                alg = JWSAlgorithm.ES256;
                signer = new ECDSASigner(ec);
            } else if (key instanceof RSAKey rsa) {
                alg = JWSAlgorithm.RS256;
                signer = new RSASSASigner(rsa);
            } else if (key instanceof OctetKeyPair okp) {
                alg = JWSAlgorithm.EdDSA;
                signer = new Ed25519Signer(okp);
            } else {
                throw new IllegalStateException("unsupported key type " + key.getKeyType());
            }
            SignedJWT jwt = new SignedJWT(
                    new JWSHeader.Builder(alg)
                            .type(JOSEObjectType.JWT)
                            .keyID(key == null ? null : key.getKeyID())
                            .build(),
                    toClaimsSet(claims));
            jwt.sign(signer);
            return jwt.serialize();
        } catch (JOSEException e) {
            throw new IllegalStateException("cannot sign test token", e);
        }
    }

    private static JWTClaimsSet toClaimsSet(Map<String, ?> claims) {
        JWTClaimsSet.Builder builder = new JWTClaimsSet.Builder();
        claims.forEach((name, value) -> {
            // Nimbus serialises Date-typed registered claims as epoch seconds; keep numbers as given.
            builder.claim(name, value instanceof Instant instant ? Date.from(instant) : value);
        });
        return builder.build();
    }
}
