package dev.aura.realtime.common.wire;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The NATS subjects of the product, all starting with {@link #PREFIX} ({@code aura.realtime.}),
 * and the reversible encoding of arbitrary names (topics, table names) into one NATS-safe subject
 * token.
 *
 * <pre>
 * aura.realtime.changes.&lt;project_id&gt;.&lt;table token&gt;   postgres change events (cdc-worker → ws-front)
 * aura.realtime.broadcast.&lt;project_id&gt;.&lt;topic token&gt;  client broadcasts (ws-front ↔ ws-front)
 * aura.realtime.cdc.status                               cdc-worker status (see {@link CdcStatus})
 * aura.realtime.rpc.subscription-check                   request/reply: validate a binding at join
 * aura.realtime.rpc.project-limits                       request/reply: a project's limit overrides
 * aura.realtime.usage                                    per-project counts (ws-front ↔ ws-front)
 * aura.realtime.messages.&lt;project_id&gt;.&lt;topic token&gt;   captured messages-table rows (cdc-worker → ws-front)
 * aura.realtime.rpc.channel-access                       request/reply: private channel checks, replay, persist
 * aura.realtime.rpc.project-keys                         request/reply: a project API key's or token issuer's project
 * </pre>
 *
 * <p>Every ws-front replica subscribes to {@code changes.>}, {@code broadcast.>} and
 * {@code cdc.status} one by one, never to {@code aura.realtime.>}: that wildcard would also match
 * {@link #SUBSCRIPTION_CHECK}, making each ws-front a silent responder to the cdc-workers' RPC.
 *
 * <p>Token encoding: ASCII letters, digits, {@code -} and {@code _} stand for themselves; every
 * other UTF-8 byte is written {@code ~HH} (upper-case hex), so dots, spaces, {@code *},
 * {@code >} and any unicode survive the round trip. The empty name is the token {@code ~}. A
 * lone UTF-16 surrogate (possible in JSON text such as {@code "\\ud800"}, but not in UTF-8) is
 * written {@code ~~HHHH}, so encoding stays injective for every Java string.
 * NATS forbids {@code .}, whitespace, {@code *} and {@code >} inside a token and an empty token
 * (nats-server subject rules); the encoding never produces them.
 */
public final class Subjects {
    public static final String PREFIX = "aura.realtime.";
    public static final String CHANGES = PREFIX + "changes";
    public static final String BROADCAST = PREFIX + "broadcast";
    public static final String CDC_STATUS = PREFIX + "cdc.status";
    public static final String SUBSCRIPTION_CHECK = PREFIX + "rpc.subscription-check";
    /** Request/reply: a project's limit overrides ({@link ProjectLimits}); any cdc-worker answers. */
    public static final String PROJECT_LIMITS = PREFIX + "rpc.project-limits";
    /** Every ws-front replica's per-project counts ({@link UsageReport}), read by every replica. */
    public static final String USAGE = PREFIX + "usage";
    /** Rows of the projects' messages tables, as {@link DbBroadcast} (docs/design.md H2). */
    public static final String MESSAGES = PREFIX + "messages";
    /** Request/reply of {@link ChannelAccess} (docs/design.md H1). */
    public static final String CHANNEL_ACCESS = PREFIX + "rpc.channel-access";
    /** Request/reply of {@link ProjectKeys} (docs/security.md "Each project's own keys"); any cdc-worker answers. */
    public static final String PROJECT_KEYS = PREFIX + "rpc.project-keys";
    /**
     * ws-front → ws-front: "do you still hold these sub ids live?", asked of a resume record's owner
     * before its sub ids are adopted (docs/design.md R); one subject per replica, {@link #resumeLive}.
     */
    public static final String RESUME_LIVE = PREFIX + "rpc.resume-live";
    /**
     * Reply-subject prefix of the cdc-worker's connection (JetStream API replies, KV watch
     * deliveries). Each binary has its own, so NATS permissions can let each subscribe only to
     * its own replies: a ws-front must not read the registry deliveries (every subscriber's
     * claims) the worker receives. Operators of an external NATS grant these prefixes (the
     * chart's nats-permissions.conf).
     */
    public static final String CDC_WORKER_INBOX = "_INBOX_aura_cdc";
    /** Reply-subject prefix of ws-front's connection; see {@link #CDC_WORKER_INBOX}. */
    public static final String WS_FRONT_INBOX = "_INBOX_aura_front";

    private static final char[] HEX = "0123456789ABCDEF".toCharArray();

    private Subjects() {}

    /** {@code aura.realtime.changes.<project>.<table token>}. */
    public static String changes(String projectId, String table) {
        return CHANGES + "." + encodeToken(projectId) + "." + encodeToken(table);
    }

    /** {@code aura.realtime.rpc.resume-live.<instance token>}: the replica's own resume-liveness subject. */
    public static String resumeLive(String instanceId) {
        return RESUME_LIVE + "." + encodeToken(instanceId);
    }

    /** {@code aura.realtime.broadcast.<project>.<topic token>}. */
    public static String broadcast(String projectId, String topic) {
        return BROADCAST + "." + encodeToken(projectId) + "." + encodeToken(topic);
    }

    /** {@code aura.realtime.messages.<project>.<topic token>}. */
    public static String messages(String projectId, String topic) {
        return MESSAGES + "." + encodeToken(projectId) + "." + encodeToken(topic);
    }

    /** A parsed {@code changes}, {@code broadcast} or {@code messages} subject. */
    public record Parsed(String kind, String projectId, String name) {}

    /**
     * Parses a subject made by {@link #changes}, {@link #broadcast} or {@link #messages}.
     *
     * @return null for any other subject (including {@link #CDC_STATUS})
     * @throws IllegalArgumentException when a token is not a valid encoding
     */
    public static Parsed parse(String subject) {
        if (!subject.startsWith(PREFIX)) {
            return null;
        }
        String[] parts = subject.substring(PREFIX.length()).split("\\.", -1);
        if (parts.length != 3
                || !(parts[0].equals("changes") || parts[0].equals("broadcast") || parts[0].equals("messages"))) {
            return null;
        }
        return new Parsed(parts[0], decodeToken(parts[1]), decodeToken(parts[2]));
    }

    /** Encodes any string into one non-empty NATS subject token; see the class doc. */
    public static String encodeToken(String name) {
        if (name.isEmpty()) {
            return "~";
        }
        StringBuilder out = new StringBuilder(name.length() + 8);
        for (int i = 0; i < name.length(); i++) {
            char ch = name.charAt(i);
            if (Character.isHighSurrogate(ch)
                    && i + 1 < name.length()
                    && Character.isLowSurrogate(name.charAt(i + 1))) {
                appendUtf8(out, name.substring(i, i + 2));
                i++;
            } else if (Character.isSurrogate(ch)) {
                // a lone surrogate has no UTF-8 form (getBytes would turn it into '?', so "a\uD800"
                // and "a?" would share a subject): written ~~HHHH, which no other input produces
                out.append("~~")
                        .append(HEX[ch >>> 12])
                        .append(HEX[(ch >>> 8) & 0xF])
                        .append(HEX[(ch >>> 4) & 0xF])
                        .append(HEX[ch & 0xF]);
            } else {
                appendUtf8(out, String.valueOf(ch));
            }
        }
        return out.toString();
    }

    private static void appendUtf8(StringBuilder out, String codePoint) {
        for (byte b : codePoint.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xFF;
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
                out.append((char) c);
            } else {
                out.append('~').append(HEX[c >>> 4]).append(HEX[c & 0xF]);
            }
        }
    }

    /**
     * Inverse of {@link #encodeToken}.
     *
     * @throws IllegalArgumentException for a malformed escape or invalid UTF-8
     */
    public static String decodeToken(String token) {
        if (token.equals("~")) {
            return "";
        }
        StringBuilder text = new StringBuilder(token.length());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(token.length());
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c == '~' && i + 1 < token.length() && token.charAt(i + 1) == '~') {
                if (i + 5 >= token.length()) {
                    throw new IllegalArgumentException("truncated escape in subject token: " + token);
                }
                int unit = 0;
                for (int k = i + 2; k < i + 6; k++) {
                    int d = Character.digit(token.charAt(k), 16);
                    if (d < 0) {
                        throw new IllegalArgumentException("bad escape in subject token: " + token);
                    }
                    unit = (unit << 4) | d;
                }
                if (!Character.isSurrogate((char) unit)) {
                    throw new IllegalArgumentException("~~ escape of a non-surrogate in subject token: " + token);
                }
                flushUtf8(bytes, text, token);
                text.append((char) unit);
                i += 5;
            } else if (c == '~') {
                if (i + 2 >= token.length()) {
                    throw new IllegalArgumentException("truncated escape in subject token: " + token);
                }
                int hi = Character.digit(token.charAt(i + 1), 16);
                int lo = Character.digit(token.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw new IllegalArgumentException("bad escape in subject token: " + token);
                }
                bytes.write((hi << 4) | lo);
                i += 2;
            } else if (c < 0x80) {
                bytes.write(c);
            } else {
                throw new IllegalArgumentException("non-ASCII character in subject token: " + token);
            }
        }
        flushUtf8(bytes, text, token);
        return text.toString();
    }

    private static void flushUtf8(ByteArrayOutputStream bytes, StringBuilder text, String token) {
        if (bytes.size() == 0) {
            return;
        }
        var decoder = StandardCharsets.UTF_8.newDecoder();
        try {
            text.append(decoder.decode(java.nio.ByteBuffer.wrap(bytes.toByteArray())));
        } catch (java.nio.charset.CharacterCodingException e) {
            throw new IllegalArgumentException("subject token is not UTF-8: " + token, e);
        }
        bytes.reset();
    }
}
