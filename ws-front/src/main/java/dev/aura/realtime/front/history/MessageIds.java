package dev.aura.realtime.front.history;

import java.security.SecureRandom;
import java.util.UUID;

/**
 * Broadcast message ids: RFC 9562 UUID version 7, assigned once by the sender's replica and
 * carried to the other replicas in {@code Aura-Event-Id}. The first 48 bits are the sender's
 * wall clock in epoch milliseconds, so every replica files a relayed message under the same
 * timestamp (what {@code broadcast.replay.since} compares against) without another header.
 * Thread-safe.
 */
public final class MessageIds {
    private static final SecureRandom RANDOM = new SecureRandom();

    private MessageIds() {}

    /** A new version 7 id stamped with {@code nowMs}. */
    public static String next(long nowMs) {
        long msb = (nowMs & 0xFFFF_FFFF_FFFFL) << 16 | 0x7000L | (RANDOM.nextInt() & 0x0FFFL);
        long lsb = (RANDOM.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
        return new UUID(msb, lsb).toString();
    }

    /**
     * The sender timestamp of a version 7 id.
     *
     * @return epoch ms, or {@code fallbackMs} when {@code id} is not a version 7 UUID
     */
    public static long timestampOf(String id, long fallbackMs) {
        if (id == null || id.length() != 36) {
            return fallbackMs;
        }
        try {
            UUID uuid = UUID.fromString(id);
            return uuid.version() == 7 ? uuid.getMostSignificantBits() >>> 16 : fallbackMs;
        } catch (IllegalArgumentException e) {
            return fallbackMs;
        }
    }
}
