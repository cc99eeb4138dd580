package dev.aura.realtime.front.auth;

import com.nimbusds.jose.jwk.JWKSet;
import dev.aura.realtime.common.auth.ApiKeys;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.auth.IssuerKeys;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.ProjectKeys;
import dev.aura.realtime.front.relay.ProjectKeysSource;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Every credential a client presents, verified the same way wherever it comes (the connect-time
 * {@code apikey}, a join's {@code access_token}, {@code setAuth}, the REST broadcast's
 * {@code apikey} and {@code Authorization}; docs/security.md "Each project's own keys"):
 *
 * <ul>
 *   <li>an opaque API key ({@code sb_publishable_...}, {@code sb_secret_...}): its SHA-256 is asked
 *       of a cdc-worker; it acts as {@code anon} or {@code service_role} of its project while
 *       unrevoked;
 *   <li>a JWT signed HS256, or without {@code iss}: the platform's keys ({@link JwtVerifier});
 *   <li>an ES256/RS256/EdDSA JWT with an {@code iss}: the project whose token issuer this is (asked
 *       of a cdc-worker) verifies it with that issuer's keys, audience and issuer, when the token
 *       names no project or that same one; a {@code kid} the issuer's keys lack asks again for
 *       fresh keys at most once per {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}; any other token
 *       (no such issuer, another project named, a kid the project lacks but the token names its
 *       project) is the platform's keys' to verify. So a key configured for one project never
 *       verifies a token of another, and the platform's keys stay the platform's.
 * </ul>
 *
 * Answers are kept ({@link VerifiedTokens}, {@link ProjectKeyAnswers}), so most verifications
 * complete at once; the returned future fails with an {@link AuthException} (wrapped in a
 * {@link CompletionException}) — see {@link #refusal}. Thread-safe.
 */
public final class Credentials {
    private final JwtVerifier platform;
    private final VerifiedTokens tokens;
    private final ProjectKeyAnswers<Claims> apiKeys;
    private final ProjectKeyAnswers<IssuerKeys> issuers;
    private final Clock clock;
    private final long minRefreshMs;

    /**
     * @param platform the platform's keys ({@code AURA_JWT_*})
     * @param source a cdc-worker's answers about projects' keys
     * @param cacheTtl {@code PROJECT_KEYS_CACHE_SECONDS}
     * @param minRefresh {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}: how often an issuer's keys may be asked again for a new kid
     */
    public Credentials(
            JwtVerifier platform, ProjectKeysSource source, Clock clock, Duration cacheTtl, Duration minRefresh) {
        this.platform = platform;
        this.clock = clock;
        this.tokens = new VerifiedTokens(clock);
        this.apiKeys = new ProjectKeyAnswers<>(source, Credentials::keyClaims, clock, cacheTtl.toMillis(), "API key");
        this.issuers =
                new ProjectKeyAnswers<>(source, Credentials::issuerKeys, clock, cacheTtl.toMillis(), "token issuer");
        this.minRefreshMs = minRefresh.toMillis();
    }

    /** The claims {@code credential} acts with, or a failed future (see {@link #refusal}). */
    public CompletableFuture<Claims> verify(String credential) {
        if (ApiKeys.isApiKey(credential)) {
            return apiKey(credential);
        }
        Claims kept = credential == null ? null : tokens.cached(credential);
        if (kept != null) {
            return CompletableFuture.completedFuture(kept);
        }
        JwtVerifier.Token token;
        try {
            token = JwtVerifier.parse(credential);
        } catch (AuthException e) {
            return CompletableFuture.failedFuture(e);
        }
        if (!token.asymmetric() || token.issuer() == null) {
            return settle(credential, () -> platform.verify(token));
        }
        return viaIssuer(credential, token, false);
    }

    /**
     * Whether the API key of SHA-256 {@code hash} is still valid, asked of a cdc-worker now (the
     * revocation sweep, {@link RevokedKeys}); true when no worker answers (kept, not closed).
     */
    CompletableFuture<Boolean> stillValid(String hash) {
        return apiKeys.get(hash, ProjectKeys.Request.apiKey(hash), true)
                .handle((known, err) -> err != null || known.answer().found());
    }

    /** The {@link AuthException} a failed {@link #verify} carries ({@code AuthUnavailable} for any other failure). */
    public static AuthException refusal(Throwable failure) {
        Throwable t = failure;
        while (t instanceof CompletionException && t.getCause() != null) {
            t = t.getCause();
        }
        return t instanceof AuthException a ? a : AuthException.unavailable("key");
    }

    private CompletableFuture<Claims> apiKey(String key) {
        ApiKeys.Kind kind = ApiKeys.kindOf(key);
        if (kind == null) {
            return CompletableFuture.failedFuture(ApiKeys.invalid());
        }
        String hash = ApiKeys.hash(key);
        return apiKeys.get(hash, ProjectKeys.Request.apiKey(hash), false).thenApply(known -> {
            Claims claims = known.value();
            if (claims == null || !claims.role().equals(kind.role())) {
                // unknown, revoked, or a row whose type is not the key's own prefix: refused
                throw new CompletionException(ApiKeys.invalid());
            }
            return claims;
        });
    }

    private CompletableFuture<Claims> viaIssuer(String credential, JwtVerifier.Token token, boolean refreshed) {
        String iss = token.issuer();
        return issuers.get(iss, ProjectKeys.Request.issuer(iss, refreshed), refreshed)
                .handle((known, err) -> {
                    if (err != null) {
                        // no worker answered: the platform's keys may still verify it; else try again later
                        return token.projectClaim() != null
                                ? settle(credential, () -> platform.verify(token))
                                : CompletableFuture.<Claims>failedFuture(refusal(err));
                    }
                    String project = known.answer().projectId();
                    String named = token.projectClaim();
                    if (!known.answer().found() || (named != null && !named.equals(project))) {
                        return settle(credential, () -> platform.verify(token));
                    }
                    IssuerKeys keys = known.value();
                    String kid = token.jwt().getHeader().getKeyID();
                    boolean knows = keys != null && keys.knows(kid);
                    if (!knows && !refreshed && mayRefresh(iss)) {
                        return viaIssuer(credential, token, true); // rotated? ask for fresh keys, once
                    }
                    if (!knows) {
                        return named != null
                                ? settle(credential, () -> platform.verify(token))
                                : settle(credential, () -> {
                                    throw new AuthException(
                                            AuthException.SIGNATURE, "Failed to validate JWT signature");
                                });
                    }
                    return settle(credential, () -> platform.verify(token, keys));
                })
                .thenCompose(f -> f);
    }

    /** Whether the issuer's keys may be asked for afresh: at most once per {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}. */
    private boolean mayRefresh(String iss) {
        long at = issuers.refreshedAtMs(iss);
        return at == Long.MIN_VALUE || clock.millis() - at >= minRefreshMs;
    }

    private interface Check {
        Claims run() throws AuthException;
    }

    /** Runs {@code check}, keeps its claims for {@code credential}, or forgets it on failure. */
    private CompletableFuture<Claims> settle(String credential, Check check) {
        try {
            Claims claims = check.run();
            tokens.keep(credential, claims);
            return CompletableFuture.completedFuture(claims);
        } catch (AuthException e) {
            tokens.forget(credential);
            return CompletableFuture.failedFuture(e);
        }
    }

    private static Claims keyClaims(String hash, ProjectKeys.Answer answer) {
        ApiKeys.Kind kind = "service_role".equals(answer.role())
                ? ApiKeys.Kind.SECRET
                : "anon".equals(answer.role()) ? ApiKeys.Kind.PUBLISHABLE : null;
        return kind == null ? null : ApiKeys.claims(answer.projectId(), kind, hash);
    }

    private static IssuerKeys issuerKeys(String iss, ProjectKeys.Answer answer) {
        if (answer.jwks() == null) {
            return null;
        }
        try {
            return IssuerKeys.of(
                    answer.projectId(),
                    iss,
                    answer.audience(),
                    JWKSet.parse(answer.jwks().toString()));
        } catch (ParseException e) {
            return null;
        }
    }
}
