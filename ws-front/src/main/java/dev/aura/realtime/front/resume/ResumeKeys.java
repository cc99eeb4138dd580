package dev.aura.realtime.front.resume;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The keys of resume records (docs/design.md R). A key is the SHA-256 (hex) of the project id, the
 * identity, the topic and the canonical bindings, each length-prefixed so no two inputs collide by
 * concatenation. The identity comes from the verified JWT: its {@code sub}, or for a token without
 * one the client's {@code resume_key} prefixed {@code anon:} (so it never equals a {@code sub});
 * the project is the token's own, so no client can name another project's or user's record.
 */
public final class ResumeKeys {
    /** One binding as it identifies a subscription. */
    public record BindingKey(String event, String table, String filter, List<String> select) {}

    private ResumeKeys() {}

    /** The identity of a token: {@code sub:<sub>}, {@code anon:<resume_key>}, or null (no automatic resume). */
    public static String identity(String sub, String resumeKey) {
        if (sub != null && !sub.isEmpty()) {
            return "sub:" + sub;
        }
        if (resumeKey != null && !resumeKey.isEmpty() && resumeKey.length() <= 256) {
            return "anon:" + resumeKey;
        }
        return null;
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
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256")
                            .digest(sb.toString().getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
