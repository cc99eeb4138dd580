package dev.aura.realtime.front.presence;

import dev.aura.realtime.common.wire.Subjects;

/**
 * Keys of the {@code aura_presence} KV bucket: {@code v1.<project>.<channel>.<presence key>.<member>},
 * one key per tracked channel membership, so re-tracking overwrites the same key.
 *
 * <p>Each part is {@link Subjects#encodeToken} with {@code ~} written as {@code =}: KV keys allow
 * only {@code [-/_=.a-zA-Z0-9]}, and {@code encodeToken} never emits {@code =} (it escapes it as
 * {@code ~3D}), so the mapping stays reversible. The {@code v1} prefix keeps keys clear of the
 * reserved {@code _kv} prefix whatever the project id is, and leaves room for a new scheme.
 */
public final class PresenceKeys {
    static final String VERSION = "v1";

    /** The decoded parts of a key. */
    public record Parts(String projectId, String channel, String presenceKey, String member) {}

    private PresenceKeys() {}

    public static String of(String projectId, String channel, String presenceKey, String member) {
        return VERSION + "." + token(projectId) + "." + token(channel) + "." + token(presenceKey) + "." + token(member);
    }

    /**
     * Inverse of {@link #of}.
     *
     * @throws IllegalArgumentException for a key of another scheme or a bad escape
     */
    public static Parts parse(String key) {
        String[] p = key.split("\\.", -1);
        if (p.length != 5 || !p[0].equals(VERSION)) {
            throw new IllegalArgumentException("not a v1 presence key: " + key);
        }
        return new Parts(untoken(p[1]), untoken(p[2]), untoken(p[3]), untoken(p[4]));
    }

    private static String token(String name) {
        return Subjects.encodeToken(name).replace('~', '=');
    }

    private static String untoken(String token) {
        return Subjects.decodeToken(token.replace('=', '~'));
    }
}
