package dev.aura.realtime.common.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.UUID;

/**
 * The one rule for a process's instance id (the {@code Aura-Origin} header, registry and presence
 * ownership, the lease holder identity): {@code INSTANCE_ID}, else {@code POD_NAME} (stable across
 * a pod's restarts, unique among live pods), else the host name plus a random suffix (two
 * processes on one machine must not share an id: each drops the other's broadcasts as its own).
 */
public final class InstanceId {
    private InstanceId() {}

    /** @param fallbackHost used when the host name cannot be resolved, e.g. {@code "ws-front"} */
    public static String fromEnv(Env env, String fallbackHost) {
        return SharedSettings.INSTANCE_ID
                .find(env)
                .or(() -> SharedSettings.POD_NAME.find(env))
                .orElseGet(() -> hostName(fallbackHost) + "-"
                        + UUID.randomUUID().toString().substring(0, 8));
    }

    private static String hostName(String fallback) {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (UnknownHostException e) {
            return fallback;
        }
    }
}
