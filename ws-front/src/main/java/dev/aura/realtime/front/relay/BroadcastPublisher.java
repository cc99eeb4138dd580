package dev.aura.realtime.front.relay;

import dev.aura.realtime.front.protocol.UserBroadcast;

/** Sends a client broadcast to the other ws-front replicas. Thread-safe, non-blocking. */
@FunctionalInterface
public interface BroadcastPublisher {
    /**
     * @param projectId the sender's project
     * @param channel the channel name (topic without {@code realtime:})
     * @param message the broadcast with its message id set
     */
    void publish(String projectId, String channel, UserBroadcast message);
}
