package dev.aura.realtime.cdc.leader;

/** Consulted by the CDC loop before every NATS publish and every slot advance. */
public interface LeaderGate {
    /** @throws FencedException when the last successful renewal is older than the renew deadline (or leadership was lost) */
    void checkFence() throws FencedException;

    /** The Lease's leaseTransitions when this term began (0 when election is disabled); sent as header Aura-Lease-Epoch. */
    long leaseEpoch();
}
