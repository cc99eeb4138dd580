package dev.aura.realtime.front.quota;

import java.util.Locale;

/** What a project's limits refused (docs/design.md D8), counted per project for the inspector (D9). */
public enum Refusal {
    /** a connection ({@code ConnectionRateLimitReached: Too many connected users}) */
    CONNECTIONS,
    /** a join over the joins per second */
    JOINS,
    /** a join whose subscription checks were over the checks per second */
    CHECKS,
    /** a client message over the messages or bytes per second */
    MESSAGES,
    /** a presence event over the presence events per second */
    PRESENCE;

    /** The name in JSON: {@code connections}, {@code joins}, ... */
    public String key() {
        return name().toLowerCase(Locale.ROOT);
    }
}
