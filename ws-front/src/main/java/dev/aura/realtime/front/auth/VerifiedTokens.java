package dev.aura.realtime.front.auth;

import dev.aura.realtime.common.auth.Claims;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Verified JWTs, shared by every connection: the connect-time {@code apikey} (Supabase clients of
 * a project mostly share one) and the {@code access_token} realtime-js sends with every join of a
 * socket until it refreshes it. Each distinct token is verified once ({@link Credentials}) and its
 * {@link Claims} (immutable) shared, instead of each connection holding a copy (about a kilobyte
 * of heap) and paying a signature check per connect and per join (token verification was a third
 * of ws-front's CPU in the join bench). A kept token is answered only while its {@code exp} is
 * ahead of the clock (once expired it is verified again, which fails with the verifier's own
 * message) and for at most {@link #MAX_AGE_MS} after it was verified, so a signing key removed
 * from the platform's key set or a project's issuer (rotation, docs/security.md) stops admitting
 * its tokens within that time. At most {@link #MAX_TOKENS} tokens and {@link #MAX_BYTES} of token
 * and claims text are kept, the least recently used dropped first; a failed token is never kept.
 * Thread-safe (every event loop).
 */
final class VerifiedTokens {
    static final int MAX_TOKENS = 1024;
    static final long MAX_BYTES = 4L << 20;
    static final long MAX_AGE_MS = 60_000;

    private record Verified(Claims claims, long atMs, long bytes) {}

    private final Clock clock;
    private final Map<String, Verified> verified = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Verified> eldest) {
            if (size() > MAX_TOKENS || bytes > MAX_BYTES) {
                bytes -= eldest.getValue().bytes();
                return true;
            }
            return false;
        }
    };

    /** Characters of the kept tokens and their claims' JSON (guarded by {@code verified}). */
    private long bytes;

    VerifiedTokens(Clock clock) {
        this.clock = clock;
    }

    /** The kept claims of {@code token} while they may be used, else null. */
    Claims cached(String token) {
        Verified cached;
        synchronized (verified) {
            cached = verified.get(token);
        }
        long now = clock.millis();
        if (cached != null && cached.claims().expiresAt().toEpochMilli() > now && now - cached.atMs() < MAX_AGE_MS) {
            return cached.claims();
        }
        return null;
    }

    /** Keeps {@code claims}, just verified, for {@code token}. */
    void keep(String token, Claims claims) {
        long size = token.length() + claims.json().length();
        synchronized (verified) {
            forgetLocked(token);
            bytes += size;
            verified.put(token, new Verified(claims, clock.millis(), size));
        }
    }

    /** {@code token} failed: it is not kept. */
    void forget(String token) {
        synchronized (verified) {
            forgetLocked(token);
        }
    }

    private void forgetLocked(String token) {
        Verified gone = verified.remove(token);
        if (gone != null) {
            bytes -= gone.bytes();
        }
    }
}
