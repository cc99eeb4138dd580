package dev.aura.realtime.cdc.leader;

/**
 * A snapshot of leadership for {@code /health} and the published CDC status.
 *
 * @param leader true only while this process leads and its fence passes
 * @param holder identity of the current lease holder as last observed (null when unknown or free)
 * @param leaseEpoch the term's {@code leaseTransitions} while leading; otherwise the last observed
 *     value (0 when election is disabled or nothing was observed yet)
 * @param mode {@value #MODE_KUBERNETES} or {@value #MODE_ALWAYS_LEADER}
 * @param reason why this process is not leading (null while leading)
 */
public record LeadershipStatus(boolean leader, String holder, long leaseEpoch, String mode, String reason) {

    /** Elected through a coordination.k8s.io/v1 Lease. */
    public static final String MODE_KUBERNETES = "kubernetes";
    /** No election: leader whenever started ({@code disabled}, or {@code auto} outside Kubernetes). */
    public static final String MODE_ALWAYS_LEADER = "always-leader";
}
