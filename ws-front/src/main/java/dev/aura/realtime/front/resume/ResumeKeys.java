package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.auth.Claims;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The keys of resume records (docs/design.md R). A key is the SHA-256 (hex) of the project id, the
 * identity, the topic and the canonical bindings, each length-prefixed so no two inputs collide by
 * concatenation. The identity comes from the verified JWT (issue 38): its {@code role} and
 * {@code sub}; for a token without {@code sub}, its role and a digest of the claims RLS can read
 * ({@link #claimsDigest}) plus the client's {@code resume_key}, without which such a token has no
 * identity. A {@code resume_key} given with a {@code sub} narrows the identity further; it never
 * widens one: no key makes a token reach a record of another role, subject or claims. The project
 * is the token's own, so no client can name another project's record.
 */
public final class ResumeKeys {
    /** One binding as it identifies a subscription. */
    public record BindingKey(String event, String table, String filter, List<String> select) {}

    /**
     * Who a record belongs to.
     *
     * @param key the identity as the record and pointer keys hash it
     * @param claimsDigest {@link #claimsDigest} of the token: a record is adopted only by a token
     *     of the same digest, which sees what the record's subscriptions were allowed
     */
    public record Identity(String key, String claimsDigest) {}

    /** Longest {@code resume_key}; a longer one is no identity. */
    public static final int MAX_RESUME_KEY_CHARS = 256;

    /**
     * Claims that differ between two tokens of one session without changing what RLS lets them
     * see (a refreshed token): left out of {@link #claimsDigest}.
     */
    private static final Set<String> PER_TOKEN_CLAIMS = Set.of("exp", "iat", "nbf", "jti");

    private ResumeKeys() {}

    /**
     * The identity of a token, or null (no automatic resume): a token without {@code sub} needs a
     * {@code resume_key} of 1 to {@value #MAX_RESUME_KEY_CHARS} characters.
     */
    public static Identity identity(Claims claims, String resumeKey) {
        boolean keyed = resumeKey != null && !resumeKey.isEmpty() && resumeKey.length() <= MAX_RESUME_KEY_CHARS;
        String digest = claimsDigest(claims.all());
        String sub = claims.subject();
        List<String> parts = new ArrayList<>();
        if (sub != null && !sub.isEmpty()) {
            parts.add("sub");
            parts.add(claims.role());
            parts.add(sub);
        } else if (keyed) {
            parts.add("claims");
            parts.add(claims.role());
            parts.add(digest);
        } else {
            return null;
        }
        parts.add(keyed ? resumeKey : null);
        StringBuilder sb = new StringBuilder();
        for (String p : parts) {
            field(sb, p);
        }
        return new Identity(sb.toString(), digest);
    }

    /**
     * SHA-256 (hex) of the claims RLS reads ({@code request.jwt.claims}), in a canonical form (object
     * keys sorted, every value typed and length-prefixed), without the per-token claims
     * ({@code exp}, {@code iat}, {@code nbf}, {@code jti}).
     */
    public static String claimsDigest(Map<String, Object> claims) {
        StringBuilder sb = new StringBuilder();
        Map<String, Object> kept = new TreeMap<>(claims);
        kept.keySet().removeAll(PER_TOKEN_CLAIMS);
        canonical(sb, kept);
        return sha256(sb.toString());
    }

    private static void canonical(StringBuilder sb, Object v) {
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> sorted = new TreeMap<>();
            m.forEach((k, x) -> sorted.put(String.valueOf(k), x));
            sb.append('{').append(sorted.size()).append(':');
            sorted.forEach((k, x) -> {
                field(sb, k);
                canonical(sb, x);
            });
            sb.append('}');
        } else if (v instanceof Collection<?> c) {
            sb.append('[').append(c.size()).append(':');
            c.forEach(x -> canonical(sb, x));
            sb.append(']');
        } else if (v == null) {
            sb.append('n');
        } else {
            sb.append(v instanceof String ? 's' : v instanceof Boolean ? 'b' : v instanceof Number ? 'd' : 'o');
            field(sb, v.toString());
        }
    }

    /** The record key of (project, identity, topic, bindings in order). */
    public static String record(String projectId, String identity, String topic, List<BindingKey> bindings) {
        List<String> parts = new ArrayList<>();
        parts.add("record");
        parts.add(projectId);
        parts.add(identity);
        parts.add(topic);
        parts.add(canonical(bindings));
        return hash(parts);
    }

    /** The pointer key of (project, identity, topic): it holds the record key of the last bindings. */
    public static String pointer(String projectId, String identity, String topic) {
        return hash(List.of("pointer", projectId, identity, topic));
    }

    /** The bindings sorted (order-insensitive), each field length-prefixed. */
    public static String canonical(List<BindingKey> bindings) {
        List<String> each = new ArrayList<>();
        for (BindingKey b : bindings) {
            StringBuilder sb = new StringBuilder();
            for (String f : new String[] {b.event(), b.table(), b.filter()}) {
                field(sb, f);
            }
            field(sb, b.select() == null ? null : String.join("\u0000", b.select()));
            each.add(sb.toString());
        }
        each.sort(null);
        StringBuilder out = new StringBuilder();
        for (String e : each) {
            field(out, e);
        }
        return out.toString();
    }

    private static void field(StringBuilder sb, String f) {
        if (f == null) {
            sb.append("-1:");
        } else {
            sb.append(f.length()).append(':').append(f);
        }
    }

    private static String hash(List<String> parts) {
        StringBuilder sb = new StringBuilder();
        for (String p : parts) {
            field(sb, p);
        }
        return sha256(sb.toString());
    }

    private static String sha256(String text) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
