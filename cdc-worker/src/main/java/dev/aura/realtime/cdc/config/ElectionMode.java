package dev.aura.realtime.cdc.config;

import java.util.Locale;

/** Values of {@code LEADER_ELECTION} ({@link CdcSettings#LEADER_ELECTION}). */
public enum ElectionMode {
    /** Kubernetes Lease inside a pod ({@code KUBERNETES_SERVICE_HOST} set), always-leader outside one. */
    AUTO,
    /** Always a Kubernetes Lease; never falls back to always-leader. */
    KUBERNETES,
    /** Always leader, no Lease: only safe with exactly one replica. */
    DISABLED;

    /** The value as written in the environment variable. */
    public String configValue() {
        return name().toLowerCase(Locale.ROOT);
    }
}
