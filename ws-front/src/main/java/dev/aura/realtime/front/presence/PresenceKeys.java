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

    private PresenceKeys() {}

    public static String of(String projectId, String channel, String presenceKey, String member) {
        return VERSION + "." + token(projectId) + "." + token(channel) + "." + token(presenceKey) + "." + token(member);
    }

    private static String token(String name) {
        return Subjects.encodeToken(name).replace('~', '=');
    }
}
