package dev.aura.realtime.common.auth;

import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The verified claims of a client token.
 *
 * @param role the {@code role} claim (anon, authenticated, service_role, ...)
 * @param projectId the {@code ref} claim, falling back to {@code project_id}
 * @param subject the {@code sub} claim or null
 * @param expiresAt the {@code exp} claim
 * @param all every claim, for {@code request.jwt.claims}
 * @param json the claims as a JSON object text, as the token carried them
 * @param apiKeyHash for the claims of a project's opaque API key ({@link ApiKeys}), the key's
 *     SHA-256 (hex): what ws-front asks again to learn of its revocation; null for a JWT
 */
public record Claims(
        String role,
        String projectId,
        String subject,
        Instant expiresAt,
        Map<String, Object> all,
        String json,
        String apiKeyHash) {
    public Claims {
        all = Collections.unmodifiableMap(new LinkedHashMap<>(all));
    }

    /** The claims of a JWT. */
    public Claims(
            String role, String projectId, String subject, Instant expiresAt, Map<String, Object> all, String json) {
        this(role, projectId, subject, expiresAt, all, json, null);
    }

    /** {@code "Token has expired N seconds ago"} (Supabase's words) when {@code exp} is not after {@code now}, else null. */
    public static String expiredMessage(Instant exp, Instant now) {
        if (exp.isAfter(now)) {
            return null;
        }
        return "Token has expired " + Math.max(0, Duration.between(exp, now).toSeconds()) + " seconds ago";
    }

    /** {@link #expiredMessage(Instant, Instant)} of this token's {@code exp}. */
    public String expiredMessage(Instant now) {
        return expiredMessage(expiresAt, now);
    }

    public boolean isServiceRole() {
        return "service_role".equals(role);
    }
}
