package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A broadcast's request to be stored in the project's messages table (docs/design.md H2), as
 * realtime-js 2.119 sends it: {@code persist: true} (kept for the retention,
 * {@code CDC_MESSAGES_RETENTION_HOURS}) or {@code persist: {ttl: <seconds>}} (kept that long, at
 * most the retention: neither replayed nor kept once it expired). On a socket it is the push's
 * {@code persist} (in a binary frame's metadata); over REST {@code ?persist=true} or
 * {@code ?persist[ttl]=<seconds>}. A missing or false {@code persist} is no request (null).
 *
 * @param ttlMs the message's time to live in milliseconds, 0 for the retention
 * @param invalid why the request is refused (a ttl that is not a positive number of seconds), else null
 */
public record Persist(long ttlMs, String invalid) {
    /** Kept for the retention. */
    public static final Persist RETENTION = new Persist(0, null);

    /** Longer ttls are taken as this (the retention caps every ttl anyway); keeps the interval in range. */
    static final long MAX_TTL_MS = 100L * 365 * 24 * 3600 * 1000;

    static final String INVALID_TTL = Reasons.malformed("persist.ttl must be a positive number of seconds");

    /** From a push's {@code persist} value; null when absent or false. */
    public static Persist of(JsonNode persist) {
        if (persist == null || persist.isMissingNode() || persist.isNull()) {
            return null;
        }
        if (persist.isObject()) {
            JsonNode ttl = persist.get("ttl");
            if (ttl == null || ttl.isNull()) {
                return RETENTION; // realtime-js sends persist=true for {ttl: undefined}
            }
            return ttl.isNumber() ? seconds(ttl.asDouble()) : new Persist(0, INVALID_TTL);
        }
        return persist.asBoolean(false) ? RETENTION : null;
    }

    /** From REST's {@code persist} and {@code persist[ttl]} query parameters (either may be null); null for neither. */
    public static Persist ofQuery(String persist, String ttlSeconds) {
        if (ttlSeconds != null) {
            try {
                return seconds(Double.parseDouble(ttlSeconds.strip()));
            } catch (NumberFormatException e) {
                return new Persist(0, INVALID_TTL);
            }
        }
        return "true".equals(persist) ? RETENTION : null;
    }

    private static Persist seconds(double seconds) {
        if (!(seconds > 0) || Double.isInfinite(seconds)) {
            return new Persist(0, INVALID_TTL);
        }
        return new Persist((long) Math.min(Math.ceil(seconds * 1000), MAX_TTL_MS), null);
    }
}
