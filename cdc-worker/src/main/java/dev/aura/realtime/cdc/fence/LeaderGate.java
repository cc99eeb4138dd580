package dev.aura.realtime.cdc.fence;

/**
 * The fence the CDC loop consults while it runs as leader.
 *
 * <p>Invariant: the worker calls {@link #checkFence()} immediately before every NATS publish and
 * every slot advance, and stops (propagates the exception) when it throws. One gate belongs to
 * one leadership term; once it has thrown because the term ended it throws for ever, so a gate
 * held by stale code can never publish in a later term. Thread-safe; cheap (no I/O).
 */
public interface LeaderGate {

    /**
     * @throws FencedException when the last successful lease renewal is older than the renew
     *     deadline, or leadership was lost or given up (shutdown)
     */
    void checkFence() throws FencedException;

    /**
     * The Lease's {@code leaseTransitions} when this term began (0 when election is disabled);
     * sent as header {@code Aura-Lease-Epoch}. Constant for the life of the gate.
     */
    long leaseEpoch();
}
