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
 * is verified again, which fails with the verifier's own message. At most {@link #MAX_TOKENS}
 * tokens are kept, the least recently used dropped first. Thread-safe (every event loop).
 */
final class ApiKeyClaims {
    static final int MAX_TOKENS = 1024;

    private final JwtVerifier verifier;
    private final Clock clock;
    private final Map<String, Claims> verified = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Claims> eldest) {
            return size() > MAX_TOKENS;
        }
    };

    ApiKeyClaims(JwtVerifier verifier, Clock clock) {
        this.verifier = verifier;
        this.clock = clock;
    }

    /** The token's claims; throws like {@link JwtVerifier#verify}. */
    Claims verify(String token) throws AuthException {
        Claims claims;
        synchronized (verified) {
            claims = verified.get(token);
        }
        if (claims != null && claims.expiresAt().isAfter(clock.instant())) {
            return claims;
        }
        claims = verifier.verify(token);
        synchronized (verified) {
            verified.put(token, claims);
        }
        return claims;
    }
}
