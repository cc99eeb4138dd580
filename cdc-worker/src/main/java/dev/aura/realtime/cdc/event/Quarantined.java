package dev.aura.realtime.cdc.event;

import dev.aura.realtime.cdc.failure.RowFault;

/**
 * Why a change went to its project's quarantine (docs/design.md C13).
 *
 * @param fault the closed code
 * @param stage where the pipeline met it: {@code decode}, {@code build}, {@code match},
 *     {@code check}, {@code render}, {@code publish} or {@code late}
 * @param detail our own words and the exception's class, never the tenant's data
 */
public record Quarantined(RowFault fault, String stage, String detail) {}
