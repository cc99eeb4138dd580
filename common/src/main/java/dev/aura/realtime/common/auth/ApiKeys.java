package dev.aura.realtime.common.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A project's opaque API keys in Supabase's two kinds (docs/security.md "Each project's own
 * keys"): {@code sb_publishable_<random>} acts as {@code anon} (browsers), {@code sb_secret_<random>}
 * as {@code service_role} (servers). Only their SHA-256 is stored ({@code aura_platform.api_keys});
 * a key is 256 random bits, so a fast hash suffices (nothing to guess: a slow hash protects
 * low-entropy passwords). A key's claims are made here, so both binaries agree on them.
 */
public final class ApiKeys {
    public static final String PUBLISHABLE_PREFIX = "sb_publishable_";
    public static final String SECRET_PREFIX = "sb_secret_";
    /** Longest key accepted: longer text is refused before it is hashed or sent anywhere. */
    public static final int MAX_LENGTH = 256;
    /** Characters of the random part shown in listings after the kind's prefix. */
    public static final int SHOWN_CHARS = 4;
    /**
     * The {@code exp} of a key's claims: keys do not expire, they are revoked (and a revoked key's
     * sockets are closed, docs/security.md). Far enough for any timer, near enough for any clock.
     */
    public static final Instant NO_EXPIRY = Instant.parse("2100-01-01T00:00:00Z");

    private static final Pattern FORM = Pattern.compile("sb_(publishable|secret)_[A-Za-z0-9_-]{16,230}");
    private static final SecureRandom RANDOM = new SecureRandom();

    /** The two kinds, with the role each acts as. */
    public enum Kind {
        PUBLISHABLE("publishable", "anon", PUBLISHABLE_PREFIX),
        SECRET("secret", "service_role", SECRET_PREFIX);

        private final String type;
        private final String role;
        private final String prefix;

        Kind(String type, String role, String prefix) {
            this.type = type;
            this.role = role;
            this.prefix = prefix;
        }

        /** {@code publishable} or {@code secret}, as the control API and {@code aura_platform.api_keys.type} say. */
        public String type() {
            return type;
        }

        /** The role the key acts as. */
        public String role() {
            return role;
        }

        public String prefix() {
            return prefix;
        }

        /** The kind of {@code type}, or null. */
        public static Kind ofType(String type) {
            for (Kind k : values()) {
                if (k.type.equals(type)) {
                    return k;
                }
            }
            return null;
        }
    }

    private ApiKeys() {}

    /** Whether {@code credential} is meant as an opaque key (it starts with {@code sb_}; a JWT never does). */
    public static boolean isApiKey(String credential) {
        return credential != null && credential.startsWith("sb_");
    }

    /** The kind of a well-formed key; null for any other text. */
    public static Kind kindOf(String key) {
        if (key == null || key.length() > MAX_LENGTH || !FORM.matcher(key).matches()) {
            return null;
        }
        return key.startsWith(SECRET_PREFIX) ? Kind.SECRET : Kind.PUBLISHABLE;
    }

    /** A new key: the kind's prefix and 32 random bytes, base64url without padding (43 characters). */
    public static String generate(Kind kind) {
        byte[] bytes = new byte[32];
        RANDOM.nextBytes(bytes);
        return kind.prefix + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }

    /** What listings show of a key: its kind's prefix and the first {@link #SHOWN_CHARS} random characters. */
    public static String shown(String key) {
        Kind kind = kindOf(key);
        int end = (kind == null ? 0 : kind.prefix.length()) + SHOWN_CHARS;
        return key.substring(0, Math.min(end, key.length()));
    }

    /** The SHA-256 of the key's UTF-8 bytes: what is stored, and asked about. */
    public static byte[] sha256(String key) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** {@link #sha256} in lower-case hex (64 characters). */
    public static String hash(String key) {
        return HexFormat.of().formatHex(sha256(key));
    }

    /**
     * The claims a key of {@code projectId} acts with: {@code {"ref": <project>, "role": <role>}}
     * (what {@code auth.jwt()} returns for it), expiring {@link #NO_EXPIRY}.
     */
    public static Claims claims(String projectId, Kind kind, String hash) {
        Map<String, Object> all = new LinkedHashMap<>();
        all.put("ref", projectId);
        all.put("role", kind.role);
        String json = "{\"ref\":\"" + projectId.replace("\\", "\\\\").replace("\"", "\\\"") + "\",\"role\":\""
                + kind.role + "\"}";
        return new Claims(kind.role, projectId, null, NO_EXPIRY, all, json, hash);
    }

    /** Refusal of an unknown, revoked or malformed key (HTTP 401 at connect; Supabase's gateway says "Invalid API key"). */
    public static AuthException invalid() {
        return new AuthException(AuthException.API_KEY, "Invalid API key: it is unknown or was revoked");
    }
}
