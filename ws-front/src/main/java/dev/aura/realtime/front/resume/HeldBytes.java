package dev.aura.realtime.front.resume;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of live changes that all resumed channels of a replica hold while their histories are
 * replayed ({@link ReplayGate}), bounded as a whole (issue 38): each channel's bound times the
 * channels resuming at once would be unbounded after a replica kill. A change that does not fit
 * overflows its channel's gate ({@link ResumeReason#buffer_overflow}). Thread-safe.
 */
public final class HeldBytes {
    private final long max;
    private final AtomicLong held = new AtomicLong();

    /** @param max the most bytes held at once */
    public HeldBytes(long max) {
        this.max = max;
    }

    /** Takes {@code bytes}; false (nothing taken) when they do not fit. */
    boolean take(long bytes) {
        while (true) {
            long now = held.get();
            if (now + bytes > max) {
                return false;
            }
            if (held.compareAndSet(now, now + bytes)) {
                return true;
            }
        }
    }

    void give(long bytes) {
        held.addAndGet(-bytes);
    }

    /** The bytes held now. */
    public long held() {
        return held.get();
    }
}
