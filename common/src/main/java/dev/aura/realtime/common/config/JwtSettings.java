package dev.aura.realtime.common.config;

import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_ACCEPT_HS256;
import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_JWKS;
import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_JWKS_CACHE_SECONDS;
import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_JWKS_FILE;
import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_JWKS_MIN_REFRESH_SECONDS;
import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_JWKS_URL;
import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_SECRET;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Which keys sign client JWTs (docs/security.md "Signing keys"; variables in
 * docs/configuration.md): the legacy HS256 secret and, beside it, public keys given inline, in a
 * file, or at a JWKS URL. Both binaries read it with {@link #fromEnv}.
 *
 * @param hs256Secret {@code AURA_JWT_SECRET}
 * @param acceptHs256 {@code AURA_JWT_ACCEPT_HS256}: HS256 tokens are accepted
 * @param jwksInline {@code AURA_JWT_JWKS} or null
 * @param jwksFile {@code AURA_JWT_JWKS_FILE} or null
 * @param jwksUrl {@code AURA_JWT_JWKS_URL} or null
 * @param jwksCacheTtl {@code AURA_JWT_JWKS_CACHE_SECONDS}
 * @param jwksMinRefresh {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}
 */
public record JwtSettings(
        String hs256Secret,
        boolean acceptHs256,
        String jwksInline,
        Path jwksFile,
        URI jwksUrl,
        Duration jwksCacheTtl,
        Duration jwksMinRefresh) {

    public JwtSettings {
        if (!acceptHs256 && jwksInline == null && jwksFile == null && jwksUrl == null) {
            throw new ConfigException(AURA_JWT_ACCEPT_HS256.name()
                    + "=false needs signing keys: set AURA_JWT_JWKS, AURA_JWT_JWKS_FILE or AURA_JWT_JWKS_URL");
        }
        if (jwksMinRefresh.compareTo(jwksCacheTtl) >= 0) {
            throw new ConfigException(AURA_JWT_JWKS_MIN_REFRESH_SECONDS.name() + "=" + jwksMinRefresh.toSeconds()
                    + " must be shorter than " + AURA_JWT_JWKS_CACHE_SECONDS.name() + "=" + jwksCacheTtl.toSeconds());
        }
    }

    /** HS256 with {@code secret} only (tests and tools). */
    public static JwtSettings hs256(String secret) {
        return new JwtSettings(secret, true, null, null, null, Duration.ofMinutes(5), Duration.ofSeconds(30));
    }

    /** True when public keys are configured beside (or instead of) the HS256 secret. */
    public boolean hasKeySet() {
        return jwksInline != null || jwksFile != null || jwksUrl != null;
    }

    /** Reads the variables; fails naming the first missing or malformed one. */
    public static JwtSettings fromEnv(Env env) {
        String secret = AURA_JWT_SECRET.read(env);
        String inline = AURA_JWT_JWKS.find(env).orElse(null);
        Path file = AURA_JWT_JWKS_FILE.find(env).map(Path::of).orElse(null);
        if (file != null && !Files.isReadable(file)) {
            throw new ConfigException(AURA_JWT_JWKS_FILE.name() + "=" + file + " is not a readable file");
        }
        URI url = AURA_JWT_JWKS_URL.find(env).map(JwtSettings::url).orElse(null);
        Duration ttl = AURA_JWT_JWKS_CACHE_SECONDS.read(env);
        Duration minRefresh = AURA_JWT_JWKS_MIN_REFRESH_SECONDS.read(env);
        return new JwtSettings(secret, AURA_JWT_ACCEPT_HS256.read(env), inline, file, url, ttl, minRefresh);
    }

    private static URI url(String raw) {
        try {
            URI uri = new URI(raw.trim());
            if (!("https".equals(uri.getScheme()) || "http".equals(uri.getScheme())) || uri.getHost() == null) {
                throw new ConfigException(AURA_JWT_JWKS_URL.name() + "=" + raw + " must be an http(s) URL");
            }
            return uri;
        } catch (URISyntaxException e) {
            throw new ConfigException(AURA_JWT_JWKS_URL.name() + "=" + raw + " is not a URL: " + e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "JwtSettings[acceptHs256=" + acceptHs256 + ", jwksInline=" + (jwksInline != null) + ", jwksFile="
                + jwksFile + ", jwksUrl=" + jwksUrl + ", jwksCacheTtl=" + jwksCacheTtl + ", jwksMinRefresh="
                + jwksMinRefresh + "]";
    }
}
