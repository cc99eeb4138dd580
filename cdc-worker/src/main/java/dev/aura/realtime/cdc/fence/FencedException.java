package dev.aura.realtime.cdc.fence;

/**
 * Thrown by {@link LeaderGate#checkFence()} when this process may no longer act as leader: the
 * lease was not renewed within the renew deadline, or leadership was lost or released. The CDC
 * loop must not publish or advance the slot after seeing it; the message says why.
 */
public final class FencedException extends Exception {

    public FencedException(String message) {
        super(message, null, false, false);
    }
}
