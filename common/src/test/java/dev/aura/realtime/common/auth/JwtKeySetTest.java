package dev.aura.realtime.common.auth;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.JWSSigner;
import com.nimbusds.jose.crypto.ECDSASigner;
import com.nimbusds.jose.crypto.Ed25519Signer;
import com.nimbusds.jose.crypto.MACSigner;
import com.nimbusds.jose.crypto.RSASSASigner;
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
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import com.sun.net.httpserver.HttpServer;
import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.JwtSettings;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 24 point 1: asymmetric signing keys (ES256, RS256, EdDSA by kid, HS256 kept as legacy)
 * and every algorithm-confusion case refused; a JWKS URL served by a local HTTP server is cached
 * and its refreshes rate-limited; a rotated key file is re-read. Tests sign with keys they generate.
 */
class JwtKeySetTest {
    static final String SECRET = "unit-test-secret-unit-test-secret-0123";
    static final String PROJECT = "11111111-2222-3333-4444-555555555555";
    static final String SIG = "JwtSignatureError: Failed to validate JWT signature";

    static final ECKey ES =
            gen(() -> new ECKeyGenerator(Curve.P_256).keyID("es-1").generate());
    static final RSAKey RS = gen(() -> new RSAKeyGenerator(2048).keyID("rs-1").generate());
    static final OctetKeyPair ED =
            gen(() -> new OctetKeyPairGenerator(Curve.Ed25519).keyID("ed-1").generate());

    private HttpServer server;

    interface Gen<T> {
        T get() throws Exception;
    }

    static <T> T gen(Gen<T> g) {
        try {
            return g.get();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    @AfterEach
    void stopServer() {
        if (server != null) {
            server.stop(0);
        }
    }

    static String jwks(JWK... keys) {
        return new JWKSet(List.of(keys)).toPublicJWKSet().toString();
    }

    static JwtVerifier verifier(Map<String, String> env) {
        return verifier(env, Clock.systemUTC());
    }

    static JwtVerifier verifier(Map<String, String> env, Clock clock) {
        Map<String, String> all = new java.util.HashMap<>(env);
        all.put("AURA_JWT_SECRET", SECRET);
        return new JwtVerifier(JwtSettings.fromEnv(new Env(all)), clock);
    }

    /** A clock the test moves by hand (the JWKS cache, its refresh limit and the file checks go by it). */
    static final class HandClock extends Clock {
        private volatile Instant now = Instant.now();

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    static JWTClaimsSet claims(String role) {
        return new JWTClaimsSet.Builder()
                .claim("role", role)
                .claim("ref", PROJECT)
                .subject("user-1")
                .expirationTime(Date.from(Instant.now().plusSeconds(600)))
                .build();
    }

    static String sign(JWSHeader header, JWSSigner signer) throws Exception {
        SignedJWT jwt = new SignedJWT(header, claims("authenticated"));
        jwt.sign(signer);
        return jwt.serialize();
    }

    static JWSHeader header(JWSAlgorithm alg, String kid) {
        return new JWSHeader.Builder(alg).type(JOSEObjectType.JWT).keyID(kid).build();
    }

    static String es256(ECKey key, String kid) throws Exception {
        return sign(header(JWSAlgorithm.ES256, kid), new ECDSASigner(key));
    }

    static String rs256(RSAKey key, String kid) throws Exception {
        return sign(header(JWSAlgorithm.RS256, kid), new RSASSASigner(key));
    }

    static String eddsa(OctetKeyPair key, String kid) throws Exception {
        return sign(header(JWSAlgorithm.EdDSA, kid), new Ed25519Signer(key));
    }

    static String reason(JwtVerifier v, String token) {
        try {
            v.verify(token);
            return "accepted";
        } catch (AuthException e) {
            return e.reason();
        }
    }

    @Test
    void es256Rs256AndEdDsaTokensAreAcceptedByKidBesideLegacyHs256() throws Exception {
        JwtVerifier v = verifier(Map.of("AURA_JWT_JWKS", jwks(ES, RS, ED)));
        assertThat(v.verify(es256(ES, "es-1")).role()).isEqualTo("authenticated");
        assertThat(v.verify(rs256(RS, "rs-1")).subject()).isEqualTo("user-1");
        assertThat(v.verify(eddsa(ED, "ed-1")).projectId()).isEqualTo(PROJECT);
        assertThat(v.verify(sign(header(JWSAlgorithm.Ed25519, "ed-1"), new Ed25519Signer(ED)))
                        .role())
                .isEqualTo("authenticated");
        String hs = sign(header(JWSAlgorithm.HS256, null), new MACSigner(SECRET.getBytes(StandardCharsets.UTF_8)));
        assertThat(reason(v, hs)).isEqualTo("accepted");

        JwtVerifier noLegacy = verifier(Map.of("AURA_JWT_JWKS", jwks(ES), "AURA_JWT_ACCEPT_HS256", "false"));
        assertThat(reason(noLegacy, hs)).isEqualTo(SIG);
        assertThat(reason(noLegacy, es256(ES, "es-1"))).isEqualTo("accepted");
        assertThatThrownBy(() -> verifier(Map.of("AURA_JWT_ACCEPT_HS256", "false")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("AURA_JWT_JWKS");
        // the HS256-only verifier of before refuses every asymmetric token
        assertThat(reason(new JwtVerifier(SECRET, Clock.systemUTC()), es256(ES, "es-1")))
                .isEqualTo(SIG);
    }

    @Test
    void everyAlgorithmConfusionIsRefused() throws Exception {
        JwtVerifier v = verifier(Map.of("AURA_JWT_JWKS", jwks(ES, RS, ED)));
        ECKey attackerEc = new ECKeyGenerator(Curve.P_256).keyID("es-1").generate();
        RSAKey attackerRsa = new RSAKeyGenerator(2048).keyID("rs-1").generate();

        // alg none: not a JWS
        String none = b64("{\"alg\":\"none\",\"typ\":\"JWT\",\"kid\":\"es-1\"}") + "."
                + b64(claims("service_role").toString()) + ".";
        assertThat(reason(v, none)).startsWith("MalformedJWT");
        // HS256 signed with the bytes of a published public key (its JWK JSON, DER, modulus)
        for (byte[] pub : List.of(
                RS.toPublicJWK().toJSONString().getBytes(StandardCharsets.UTF_8),
                RS.toRSAPublicKey().getEncoded(),
                ES.toPublicJWK().toJSONString().getBytes(StandardCharsets.UTF_8),
                ES.toECPublicKey().getEncoded())) {
            assertThat(reason(v, sign(header(JWSAlgorithm.HS256, "rs-1"), new MACSigner(pad(pub)))))
                    .isEqualTo(SIG);
        }
        // alg/kty mismatch: a kid of another key type (signed by the attacker's key of the alg's type)
        assertThat(reason(v, es256(attackerEc, "rs-1"))).isEqualTo(SIG);
        assertThat(reason(v, es256(attackerEc, "ed-1"))).isEqualTo(SIG);
        assertThat(reason(v, rs256(attackerRsa, "es-1"))).isEqualTo(SIG);
        assertThat(reason(v, eddsa(new OctetKeyPairGenerator(Curve.Ed25519).generate(), "rs-1")))
                .isEqualTo(SIG);
        // the right kid, the attacker's key of the same type
        assertThat(reason(v, es256(attackerEc, "es-1"))).isEqualTo(SIG);
        assertThat(reason(v, rs256(attackerRsa, "rs-1"))).isEqualTo(SIG);
        // the attacker's key embedded in the header (jwk) is never used
        assertThat(reason(
                        v,
                        sign(
                                new JWSHeader.Builder(JWSAlgorithm.ES256)
                                        .keyID("es-1")
                                        .jwk(attackerEc.toPublicJWK())
                                        .build(),
                                new ECDSASigner(attackerEc))))
                .isEqualTo(SIG);
        assertThat(reason(
                        v,
                        sign(
                                new JWSHeader.Builder(JWSAlgorithm.RS256)
                                        .jwkURL(URI.create("https://attacker.example/jwks.json"))
                                        .keyID("attacker")
                                        .build(),
                                new RSASSASigner(attackerRsa))))
                .isEqualTo(SIG);
        // missing kid with several asymmetric keys: ambiguous, refused even when signed by one of them
        assertThat(reason(v, es256(ES, null))).isEqualTo(SIG);
        assertThat(reason(v, rs256(RS, null))).isEqualTo(SIG);
        // ... accepted when exactly one asymmetric key is configured
        assertThat(reason(verifier(Map.of("AURA_JWT_JWKS", jwks(ES))), es256(ES, null)))
                .isEqualTo("accepted");
        // unknown kid
        assertThat(reason(v, es256(ES, "es-2"))).isEqualTo(SIG);
        // algorithms outside ES256/RS256/EdDSA, even with a published key of the right type
        assertThat(reason(v, sign(header(JWSAlgorithm.PS256, "rs-1"), new RSASSASigner(RS))))
                .isEqualTo(SIG);
        assertThat(reason(v, sign(header(JWSAlgorithm.RS512, "rs-1"), new RSASSASigner(RS))))
                .isEqualTo(SIG);
        // a tampered payload
        String good = rs256(RS, "rs-1");
        String[] parts = good.split("\\.");
        String tampered = parts[0] + "." + b64(claims("service_role").toString()) + "." + parts[2];
        assertThat(reason(v, tampered)).isEqualTo(SIG);
    }

    @Test
    void keysTheirJwkRestrictsOrThatAreTooWeakAreRefused() throws Exception {
        ECKey p384 = new ECKeyGenerator(Curve.P_384).keyID("p384").generate();
        RSAKey weak = new RSAKeyGenerator(1024, true).keyID("weak").generate();
        ECKey enc = new ECKeyGenerator(Curve.P_256)
                .keyID("enc")
                .keyUse(KeyUse.ENCRYPTION)
                .generate();
        RSAKey rsForPs = new RSAKeyGenerator(2048)
                .keyID("ps")
                .algorithm(JWSAlgorithm.PS256)
                .generate();
        JwtVerifier v = verifier(Map.of("AURA_JWT_JWKS", jwks(p384, weak, enc, rsForPs)));
        // ES256 header over a P-384 key (nimbus would verify ES384 only; the curve must be P-256)
        assertThat(reason(v, sign(header(JWSAlgorithm.ES384, "p384"), new ECDSASigner(p384))))
                .isEqualTo(SIG);
        assertThat(reason(
                        v,
                        sign(
                                header(JWSAlgorithm.RS256, "weak"),
                                new RSASSASigner(
                                        weak.toPrivateKey(),
                                        java.util.Set.of(
                                                com.nimbusds.jose.crypto.opts.AllowWeakRSAKey.getInstance())))))
                .isEqualTo(SIG);
        assertThat(reason(v, es256(enc, "enc"))).isEqualTo(SIG);
        assertThat(reason(v, rs256(rsForPs, "ps"))).isEqualTo(SIG);
        // symmetric keys in a JWKS never verify anything (the HS256 secret is AURA_JWT_SECRET alone)
        byte[] oct = "another-secret-another-secret-0123456".getBytes(StandardCharsets.UTF_8);
        String octJwks = "{\"keys\":[{\"kty\":\"oct\",\"kid\":\"hs\",\"k\":\"" + Base64URL.encode(oct) + "\"}]}";
        JwtVerifier withOct = verifier(Map.of("AURA_JWT_JWKS", octJwks));
        assertThat(reason(withOct, sign(header(JWSAlgorithm.HS256, "hs"), new MACSigner(oct))))
                .isEqualTo(SIG);
        assertThatThrownBy(() -> verifier(Map.of(
                        "AURA_JWT_JWKS_URL", "http://127.0.0.1:1/jwks.json",
                        "AURA_JWT_JWKS_CACHE_SECONDS", "30",
                        "AURA_JWT_JWKS_MIN_REFRESH_SECONDS", "30")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("AURA_JWT_JWKS_MIN_REFRESH_SECONDS");
        assertThatThrownBy(() -> verifier(Map.of("AURA_JWT_JWKS", "{not json")))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("AURA_JWT_JWKS");
    }

    @Test
    void aJwksUrlIsCachedAndAnUnknownKidCannotMakeUsFetchInALoop() throws Exception {
        ECKey newKey = new ECKeyGenerator(Curve.P_256).keyID("es-2").generate();
        AtomicReference<String> served = new AtomicReference<>(jwks(ES, RS));
        AtomicInteger fetches = new AtomicInteger();
        String url = serve(served, fetches);
        HandClock clock = new HandClock();
        JwtVerifier v = verifier(
                Map.of(
                        "AURA_JWT_JWKS_URL", url,
                        "AURA_JWT_JWKS_CACHE_SECONDS", "60",
                        "AURA_JWT_JWKS_MIN_REFRESH_SECONDS", "2"),
                clock);
        assertThat(reason(v, es256(ES, "es-1"))).isEqualTo("accepted");
        assertThat(reason(v, rs256(RS, "rs-1"))).isEqualTo("accepted");
        assertThat(fetches.get()).as("one fetch, then the cache").isEqualTo(1);

        // a client sends tokens with ever new unknown kids within one interval: one more fetch
        for (int i = 0; i < 200; i++) {
            assertThat(reason(v, es256(ES, "unknown-" + i))).isEqualTo(SIG);
        }
        assertThat(fetches.get()).as("fetches after 200 unknown kids").isLessThanOrEqualTo(2);
        int afterStorm = fetches.get();

        // rotation: the new key is published beside the old; not fetched before the interval ends,
        // found once it has
        served.set(jwks(ES, RS, newKey));
        clock.advance(Duration.ofMillis(1_900));
        assertThat(reason(v, es256(newKey, "es-2"))).as("within the interval").isEqualTo(SIG);
        assertThat(fetches.get()).isEqualTo(afterStorm);
        clock.advance(Duration.ofMillis(200));
        assertThat(reason(v, es256(newKey, "es-2"))).isEqualTo("accepted");
        assertThat(reason(v, es256(ES, "es-1")))
                .as("the old key while still published")
                .isEqualTo("accepted");
        assertThat(fetches.get()).isLessThanOrEqualTo(afterStorm + 1);
    }

    @Test
    void aRemovedKeyIsRefusedOnceTheCachedSetExpires() throws Exception {
        ECKey newKey = new ECKeyGenerator(Curve.P_256).keyID("es-2").generate();
        AtomicReference<String> served = new AtomicReference<>(jwks(ES, newKey));
        AtomicInteger fetches = new AtomicInteger();
        HandClock clock = new HandClock();
        JwtVerifier v = verifier(
                Map.of(
                        "AURA_JWT_JWKS_URL", serve(served, fetches),
                        "AURA_JWT_JWKS_CACHE_SECONDS", "2",
                        "AURA_JWT_JWKS_MIN_REFRESH_SECONDS", "1"),
                clock);
        assertThat(reason(v, es256(ES, "es-1"))).isEqualTo("accepted");
        assertThat(reason(v, es256(newKey, "es-2"))).isEqualTo("accepted");
        served.set(jwks(newKey));
        clock.advance(Duration.ofMillis(1_900));
        assertThat(reason(v, es256(ES, "es-1")))
                .as("while the cached set is fresh")
                .isEqualTo("accepted");
        clock.advance(Duration.ofMillis(200));
        assertThat(reason(v, es256(ES, "es-1"))).isEqualTo(SIG);
        assertThat(reason(v, es256(newKey, "es-2"))).isEqualTo("accepted");
    }

    @Test
    void aJwksUrlThatCannotBeReachedRefusesAsymmetricTokensButNotLegacyOnes() throws Exception {
        JwtVerifier v = verifier(Map.of("AURA_JWT_JWKS_URL", "http://127.0.0.1:1/jwks.json"));
        assertThat(reason(v, es256(ES, "es-1"))).isEqualTo(SIG);
        String hs = sign(header(JWSAlgorithm.HS256, null), new MACSigner(SECRET.getBytes(StandardCharsets.UTF_8)));
        assertThat(reason(v, hs)).isEqualTo("accepted");
    }

    @Test
    void aRotatedKeyFileIsReRead(@TempDir Path dir) throws Exception {
        ECKey newKey = new ECKeyGenerator(Curve.P_256).keyID("es-2").generate();
        Path file = dir.resolve("jwks.json");
        Files.writeString(file, jwks(ES));
        HandClock clock = new HandClock();
        JwtVerifier v = verifier(Map.of("AURA_JWT_JWKS_FILE", file.toString()), clock);
        assertThat(reason(v, es256(ES, "es-1"))).isEqualTo("accepted");
        assertThat(reason(v, es256(newKey, "es-2"))).isEqualTo(SIG);

        Files.writeString(file, jwks(ES, newKey));
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(5)));
        clock.advance(Duration.ofMillis(900));
        assertThat(reason(v, es256(newKey, "es-2"))).as("before the next check").isEqualTo(SIG);
        clock.advance(Duration.ofMillis(200));
        assertThat(reason(v, es256(newKey, "es-2"))).isEqualTo("accepted");
        assertThat(reason(v, es256(ES, "es-1"))).isEqualTo("accepted");

        Files.writeString(file, jwks(newKey));
        Files.setLastModifiedTime(file, FileTime.from(Instant.now().plusSeconds(10)));
        clock.advance(Duration.ofMillis(1_100));
        assertThat(reason(v, es256(ES, "es-1"))).isEqualTo(SIG);
        assertThat(reason(v, es256(newKey, "es-2"))).isEqualTo("accepted");
        assertThatThrownBy(() -> verifier(
                        Map.of("AURA_JWT_JWKS_FILE", dir.resolve("missing").toString())))
                .isInstanceOf(ConfigException.class);
    }

    private String serve(AtomicReference<String> served, AtomicInteger fetches) throws Exception {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/jwks.json", exchange -> {
            fetches.incrementAndGet();
            byte[] body = served.get().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(200, body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/jwks.json";
    }

    private static String b64(String s) {
        return Base64URL.encode(s.getBytes(StandardCharsets.UTF_8)).toString();
    }

    /** HMAC-SHA256 keys need 32 bytes; public keys' JSON and DER are longer, a short one is padded. */
    private static byte[] pad(byte[] key) {
        return key.length >= 32 ? key : java.util.Arrays.copyOf(key, 32);
    }
}
