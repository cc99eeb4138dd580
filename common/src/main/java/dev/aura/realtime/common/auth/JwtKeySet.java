package dev.aura.realtime.common.auth;

import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.source.ImmutableJWKSet;
import com.nimbusds.jose.jwk.source.JWKSetBasedJWKSource;
import com.nimbusds.jose.jwk.source.JWKSetCacheRefreshEvaluator;
import com.nimbusds.jose.jwk.source.JWKSetSource;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.JwtSettings;
import java.io.IOException;
import java.net.MalformedURLException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.text.ParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The public keys that sign client JWTs, from up to three nimbus {@link JWKSource}s: the inline
 * {@code AURA_JWT_JWKS}, the file {@code AURA_JWT_JWKS_FILE} (re-read when its modification time
 * changes, looked at once a second at most) and the URL {@code AURA_JWT_JWKS_URL} (nimbus's
 * caching, rate-limited source: a kid not in the cached set refreshes it, at most two fetches per
 * {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}, so unknown kids cannot make us fetch in a loop). Both
 * the file's checks and the URL's cache and refreshes go by the verifier's clock.
 * Only public EC, RSA and OKP keys are ever returned (symmetric {@code oct} keys in a JWKS are
 * ignored: the HS256 secret is {@code AURA_JWT_SECRET} alone). Thread-safe.
 */
final class JwtKeySet {
    private static final Logger log = LoggerFactory.getLogger(JwtKeySet.class);
    private static final int URL_TIMEOUT_MS = 2_000;
    private static final int URL_SIZE_LIMIT = 512 * 1024;

    private final List<JWKSource<SecurityContext>> sources;

    JwtKeySet(List<JWKSource<SecurityContext>> sources) {
        this.sources = List.copyOf(sources);
    }

    static JwtKeySet of(JwtSettings settings, LongSupplier millis) {
        List<JWKSource<SecurityContext>> sources = new ArrayList<>();
        if (settings.jwksInline() != null) {
            sources.add(new ImmutableJWKSet<>(parse(settings.jwksInline(), "AURA_JWT_JWKS")));
        }
        if (settings.jwksFile() != null) {
            sources.add(new FileSource(settings.jwksFile(), millis));
        }
        if (settings.jwksUrl() != null) {
            try {
                JWKSource<SecurityContext> url = JWKSourceBuilder.<SecurityContext>create(
                                settings.jwksUrl().toURL(),
                                new DefaultResourceRetriever(URL_TIMEOUT_MS, URL_TIMEOUT_MS, URL_SIZE_LIMIT))
                        .cache(settings.jwksCacheTtl().toMillis(), URL_TIMEOUT_MS * 2L)
                        .rateLimited(settings.jwksMinRefresh().toMillis())
                        .refreshAheadCache(false)
                        .retrying(false)
                        .outageTolerant(false)
                        .build();
                sources.add(new ClockedSource(((JWKSetBasedJWKSource<SecurityContext>) url).getJWKSetSource(), millis));
            } catch (MalformedURLException | IllegalArgumentException e) {
                throw new ConfigException("AURA_JWT_JWKS_URL=" + settings.jwksUrl() + " is not a URL");
            }
        }
        return new JwtKeySet(sources);
    }

    boolean isEmpty() {
        return sources.isEmpty();
    }

    /**
     * The public EC, RSA and OKP keys matching {@code matcher} in every source.
     *
     * @throws KeySourceException when none matched and a source failed (URL unreachable, refresh
     *     rate-limited)
     */
    List<JWK> select(JWKMatcher matcher) throws KeySourceException {
        List<JWK> found = new ArrayList<>();
        KeySourceException failure = null;
        JWKSelector selector = new JWKSelector(matcher);
        for (JWKSource<SecurityContext> source : sources) {
            try {
                for (JWK k : source.get(selector, null)) {
                    KeyType kty = k.getKeyType();
                    if (KeyType.EC.equals(kty) || KeyType.RSA.equals(kty) || KeyType.OKP.equals(kty)) {
                        found.add(k.toPublicJWK());
                    }
                }
            } catch (KeySourceException e) {
                failure = e;
            }
        }
        if (found.isEmpty() && failure != null) {
            throw failure;
        }
        return found;
    }

    static JWKSet parse(String json, String where) {
        try {
            return JWKSet.parse(json);
        } catch (ParseException e) {
            throw new ConfigException(where + " is not a JWKS ({\"keys\":[...]}): " + e.getMessage());
        }
    }

    /**
     * nimbus's {@link JWKSetBasedJWKSource} on {@code millis} instead of the system clock: the URL's
     * cached set expires, and its refreshes are rate-limited, by the verifier's clock (as the file's
     * checks are). The same two steps: the cached set, then one refresh when no key matched.
     */
    static final class ClockedSource implements JWKSource<SecurityContext> {
        private final JWKSetSource<SecurityContext> source;
        private final LongSupplier millis;

        ClockedSource(JWKSetSource<SecurityContext> source, LongSupplier millis) {
            this.source = source;
            this.millis = millis;
        }

        @Override
        public List<JWK> get(JWKSelector selector, SecurityContext context) throws KeySourceException {
            long now = millis.getAsLong();
            JWKSet cached = source.getJWKSet(JWKSetCacheRefreshEvaluator.noRefresh(), now, context);
            List<JWK> found = selector.select(cached);
            if (found.isEmpty()) {
                JWKSet refreshed =
                        source.getJWKSet(JWKSetCacheRefreshEvaluator.referenceComparison(cached), now, context);
                if (refreshed != null) {
                    found = selector.select(refreshed);
                }
            }
            return found;
        }
    }

    /** A JWKS file, re-read when its modification time or size changes (checked once a second at most). */
    static final class FileSource implements JWKSource<SecurityContext> {
        private static final long CHECK_EVERY_MS = 1_000;
        private final Path path;
        private final LongSupplier millis;
        private JWKSet keys;
        private FileTime modified;
        private long size = -1;
        private long checkedAt;

        FileSource(Path path, LongSupplier millis) {
            this.path = path;
            this.millis = millis;
            try {
                load();
            } catch (IOException e) {
                throw new ConfigException("AURA_JWT_JWKS_FILE=" + path + " cannot be read: " + e.getMessage());
            }
            if (keys == null) {
                throw new ConfigException("AURA_JWT_JWKS_FILE=" + path + " is not a JWKS ({\"keys\":[...]})");
            }
        }

        @Override
        public synchronized List<JWK> get(JWKSelector selector, SecurityContext context) {
            long now = millis.getAsLong();
            if (now - checkedAt >= CHECK_EVERY_MS) {
                checkedAt = now;
                try {
                    load();
                } catch (IOException e) {
                    log.warn(
                            "AURA_JWT_JWKS_FILE {} cannot be read ({}); keeping the keys read before",
                            path,
                            e.toString());
                }
            }
            return selector.select(keys);
        }

        private void load() throws IOException {
            FileTime m = Files.getLastModifiedTime(path);
            long s = Files.size(path);
            if (m.equals(modified) && s == size) {
                return;
            }
            String text = Files.readString(path);
            try {
                JWKSet parsed = JWKSet.parse(text);
                keys = parsed;
                modified = m;
                size = s;
                log.info(
                        "AURA_JWT_JWKS_FILE {}: {} key(s) loaded",
                        path,
                        parsed.getKeys().size());
            } catch (ParseException e) {
                // a half-written file: keep the previous keys and look again at the next check
                log.warn(
                        "AURA_JWT_JWKS_FILE {} is not a JWKS ({}); keeping the keys read before", path, e.getMessage());
            }
        }
    }
}
