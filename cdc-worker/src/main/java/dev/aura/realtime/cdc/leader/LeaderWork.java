package dev.aura.realtime.cdc.leader;

/** The work run while leading. It must return promptly (or throw InterruptedException) when its thread is interrupted. */
@FunctionalInterface
public interface LeaderWork {
    void run(LeaderGate gate) throws Exception;
}
