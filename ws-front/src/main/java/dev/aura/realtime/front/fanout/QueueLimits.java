package dev.aura.realtime.front.fanout;

import java.time.Duration;

/**
 * Bounds of each event loop's delivery queue ({@link LoopOutbox}; docs/protocol.md section 5).
 *
 * @param maxDelay a message that waited longer than this before its socket's turn is not written;
 *     its recipients are closed instead ({@code WS_MAX_QUEUE_DELAY_MS})
 * @param maxBytes queued bytes per event loop (shared frames once, plus 16 bytes per recipient); a
 *     message that does not fit is not queued and its recipients are closed ({@code WS_MAX_QUEUE_BYTES})
 */
public record QueueLimits(Duration maxDelay, long maxBytes) {
    public QueueLimits {
        if (maxDelay.isNegative() || maxDelay.isZero() || maxBytes <= 0) {
            throw new IllegalArgumentException("queue limits must be positive: " + maxDelay + ", " + maxBytes);
        }
    }
}
