package dev.aura.realtime.common.filter;

/** A postgres_changes filter that cannot be parsed or applied; the message is safe to show to clients. */
public final class FilterException extends Exception {
    public FilterException(String message) {
        super(message, null, false, false);
    }
}
