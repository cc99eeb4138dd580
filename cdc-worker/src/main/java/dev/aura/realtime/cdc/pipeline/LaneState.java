package dev.aura.realtime.cdc.pipeline;

/** One project's late lane as the {@link LateLane} keeps it; guarded by its own monitor. */
final class LaneState {
    final String projectId;
    volatile boolean late;
    int unacked;
    long lastHeldSeq;
    long processedSeq;
    long bytes;
    long backSinceMs;
    /** When the project last became late: it stays late for {@link LateLane#STAY_LATE_MS} at least. */
    long lateSinceMs;

    LaneState(String projectId) {
        this.projectId = projectId;
    }
}
