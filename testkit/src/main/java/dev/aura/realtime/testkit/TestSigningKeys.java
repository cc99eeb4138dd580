package dev.aura.realtime.testkit;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.ECKey;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.ECKeyGenerator;
import com.nimbusds.jose.jwk.gen.OctetKeyPairGenerator;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import java.util.List;

/**
 * Signing keys a test generates (never shipped ones): an EC P-256 key for ES256, an RSA 2048-bit
 * key for RS256, an Ed25519 key for EdDSA, each with {@code use: sig} and the given {@code kid};
 * and the public JWKS of a set of them, as a platform publishes it.
 */
public final class TestSigningKeys {
    private TestSigningKeys() {}

    public static ECKey es256(String kid) {
        try {
            return new ECKeyGenerator(Curve.P_256)
                    .keyID(kid)
                    .keyUse(KeyUse.SIGNATURE)
                    .generate();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    public static RSAKey rs256(String kid) {
        try {
            return new RSAKeyGenerator(2048).keyID(kid).keyUse(KeyUse.SIGNATURE).generate();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    public static OctetKeyPair ed25519(String kid) {
        try {
            return new OctetKeyPairGenerator(Curve.Ed25519)
                    .keyID(kid)
                    .keyUse(KeyUse.SIGNATURE)
                    .generate();
        } catch (JOSEException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The public JWKS ({@code {"keys":[...]}}) of {@code keys}: private parts removed. */
    public static String publicJwks(List<? extends JWK> keys) {
        return new JWKSet(List.copyOf(keys)).toPublicJWKSet().toString();
    }
}
