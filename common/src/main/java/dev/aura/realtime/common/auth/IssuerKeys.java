package dev.aura.realtime.common.auth;

import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One project's token issuer (docs/security.md "Each project's own keys"): the issuer
 * ({@code iss}) its tokens carry, the audience they must name (or null), and the public keys that
 * sign them, as {@link JwtVerifier#verify(JwtVerifier.Token, IssuerKeys)} uses them. Only public
 * EC, RSA and OKP keys are kept (private parts and symmetric keys are dropped). Immutable.
 */
public final class IssuerKeys {
    /** The most keys kept of one issuer's set (real providers publish two or three). */
    public static final int MAX_KEYS = 32;

    private final String projectId;
    private final String issuer;
    private final String audience;
    private final JWKSet keys;
    private final JwtKeySet keySet;

    private IssuerKeys(String projectId, String issuer, String audience, JWKSet keys) {
        this.projectId = Objects.requireNonNull(projectId);
        this.issuer = Objects.requireNonNull(issuer);
        this.audience = audience;
        this.keys = keys;
        this.keySet = new JwtKeySet(List.of(new ImmutableJWKSet<>(keys)));
    }

    /** The issuer of {@code projectId} with the public keys of {@code keys} (at most {@link #MAX_KEYS}). */
    public static IssuerKeys of(String projectId, String issuer, String audience, JWKSet keys) {
        return new IssuerKeys(projectId, issuer, audience, publicKeys(keys));
    }

    /** The public EC, RSA and OKP keys of {@code set}, at most {@link #MAX_KEYS}. */
    public static JWKSet publicKeys(JWKSet set) {
        List<JWK> out = new ArrayList<>();
        for (JWK k : set.getKeys()) {
            KeyType kty = k.getKeyType();
            if ((KeyType.EC.equals(kty) || KeyType.RSA.equals(kty) || KeyType.OKP.equals(kty))
                    && out.size() < MAX_KEYS) {
                out.add(k.toPublicJWK());
            }
        }
        return new JWKSet(out);
    }

    public String projectId() {
        return projectId;
    }

    public String issuer() {
        return issuer;
    }

    /** The audience a token's {@code aud} must contain, or null when none is configured. */
    public String audience() {
        return audience;
    }

    /** The public keys. */
    public JWKSet keys() {
        return keys;
    }

    /** Whether a key has id {@code kid} (a token naming another may mean the provider rotated: ask again). */
    public boolean knows(String kid) {
        return kid == null || keys.getKeyByKeyId(kid) != null;
    }

    JwtKeySet keySet() {
        return keySet;
    }
}
