package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * The cdc-worker's state as published on {@link Subjects#CDC_STATUS} at every change of
 * {@code active} and every few seconds (heartbeat), so ws-front can tell postgres_changes
 * subscribers when changes cannot flow (PRODUCT.md D6).
 *
 * @param instance the publishing worker's instance id
 * @param active the {@code cdc_active} flag of {@code /health}
 * @param reason why it is not active (null when active)
 * @param gapFrom first LSN of a range of changes lost with a recreated slot, else null
 * @param gapTo last LSN of that range, else null
 * @param atMs publisher wall clock, epoch milliseconds
 */
public record CdcStatus(
        @JsonProperty("instance") String instance,
        @JsonProperty("active") boolean active,
        @JsonProperty("reason") String reason,
        @JsonProperty("gap_from") String gapFrom,
        @JsonProperty("gap_to") String gapTo,
        @JsonProperty("at_ms") long atMs) {}
