package dev.aura.realtime.common.wire;

/** NATS message headers set by the product (NATS headers need nats-server >= 2.2). */
public final class AuraHeaders {
    /** Instance id of the process that published the message; receivers drop their own echoes. */
    public static final String ORIGIN = "Aura-Origin";
    /** Stable id of a change event: {@code <commit LSN>:<ordinal in transaction>}; duplicates share it. */
    public static final String EVENT_ID = "Aura-Event-Id";
    /** The Lease's {@code leaseTransitions} while the publisher held it; 0 without leader election. */
    public static final String LEASE_EPOCH = "Aura-Lease-Epoch";

    private AuraHeaders() {}
}
