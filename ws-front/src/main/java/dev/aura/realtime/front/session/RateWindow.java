package dev.aura.realtime.front.session;

/**
 * A fixed one-second window counter: at most {@code limit} events per wall-clock second.
 * Not thread-safe; owned by one connection's event loop.
 */
public final class RateWindow {
    private final int limit;
    private boolean started;
    private long windowStartMs;
    private int count;

    public RateWindow(int limit) {
        this.limit = limit;
    }

    /** Counts one event at {@code nowMs}; false when the window is already full. */
    public boolean tryAcquire(long nowMs) {
        // not "windowStartMs = Long.MIN_VALUE": nowMs - Long.MIN_VALUE overflows to a negative number,
        // so the first window never ended and the limit applied to the connection's whole life
        if (!started || nowMs - windowStartMs >= 1000) {
            started = true;
            windowStartMs = nowMs;
            count = 0;
        }
        if (count >= limit) {
            return false;
        }
        count++;
        return true;
    }
}
