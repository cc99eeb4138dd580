package dev.aura.realtime.cdc.leader;

/** Leadership can no longer be vouched for: stop publishing and advancing at once. */
public class FencedException extends Exception {
    public FencedException(String message) {
        super(message);
    }
}
