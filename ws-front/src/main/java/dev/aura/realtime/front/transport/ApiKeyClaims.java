package dev.aura.realtime.front.transport;

import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.auth.JwtVerifier;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code apikey} of each connection, verified once per distinct token: Supabase clients of a
 * project mostly share one key (the anon key), so connections share its verified {@link Claims}
 * (immutable) instead of each holding a copy (about a kilobyte of heap) and paying a signature
 * check. A cached token is used only while its {@code exp} is ahead of the clock; once expired it
 * is verified again, which fails with the verifier's own message; it is also verified again
 * {@link #MAX_AGE_MS} after it was, so a signing key removed from the key set (rotation,
 * docs/security.md) stops admitting its tokens at connect within that time. At most {@link #MAX_TOKENS}
 * tokens are kept, the least recently used dropped first. Thread-safe (every event loop).
 */
final class ApiKeyClaims {
    static final int MAX_TOKENS = 1024;
    static final long MAX_AGE_MS = 60_000;

    private record Verified(Claims claims, long atMs) {}

    private final JwtVerifier verifier;
    private final Clock clock;
    private final Map<String, Verified> verified = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Verified> eldest) {
            return size() > MAX_TOKENS;
        }
    };

    ApiKeyClaims(JwtVerifier verifier, Clock clock) {
        this.verifier = verifier;
        this.clock = clock;
    }

    /** The token's claims; throws like {@link JwtVerifier#verify}. */
    Claims verify(String token) throws AuthException {
        Verified cached;
        synchronized (verified) {
            cached = verified.get(token);
        }
        long now = clock.millis();
        if (cached != null && cached.claims().expiresAt().toEpochMilli() > now && now - cached.atMs() < MAX_AGE_MS) {
            return cached.claims();
        }
        Claims claims;
        try {
            claims = verifier.verify(token);
        } catch (AuthException e) {
            synchronized (verified) {
                verified.remove(token);
            }
            throw e;
        }
        synchronized (verified) {
            verified.put(token, new Verified(claims, now));
        }
        return claims;
    }
}
