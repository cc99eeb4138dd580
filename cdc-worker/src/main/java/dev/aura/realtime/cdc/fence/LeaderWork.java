package dev.aura.realtime.cdc.fence;

/**
 * The work run while leading (the CDC pipeline: poll the slot, publish, advance).
 *
 * <p>Runs on a dedicated thread named {@code aura-leader-work-<term>} that the election starts
 * when leadership is acquired. It must return promptly, or throw {@link InterruptedException},
 * when that thread is interrupted: this is how loss of leadership and shutdown stop it. Returning
 * or throwing while still leader is treated as a failure: it is logged and the work is started
 * again after a backoff (the lease retry period).
 */
@FunctionalInterface
public interface LeaderWork {

    /** @param gate the fence of this leadership term; check it before every publish and slot advance */
    void run(LeaderGate gate) throws Exception;
}
