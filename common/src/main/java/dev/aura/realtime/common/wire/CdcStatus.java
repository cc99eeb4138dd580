package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.time.Duration;

/**
 * The cdc-worker's state as published on {@link Subjects#CDC_STATUS} at every change of
 * {@code active} and every {@link #HEARTBEAT} (heartbeat), so ws-front can tell postgres_changes
 * subscribers when changes cannot flow (docs/design.md D6). The heartbeat period is a contract
 * between the binaries: ws-front's silence timeout ({@code WS_CDC_STATUS_TIMEOUT_MS}) must exceed it.
 *
 * @param instance the publishing worker's instance id
 * @param active the {@code cdc_active} flag of {@code /health}
 * @param reason why it is not active (null when active)
 * @param gapFrom first LSN of a range of changes lost with a recreated slot, else null
 * @param gapTo last LSN of that range, else null
 * @param atMs publisher wall clock, epoch milliseconds
 * @param slotLagBytes WAL written but not yet confirmed by the worker ({@code /health}'s
 *     {@code slot.lag_bytes}), null when unknown or from a worker that predates it; shown by the
 *     inspector (docs/design.md D9)
 */
public record CdcStatus(
        @JsonProperty("instance") String instance,
        @JsonProperty("active") boolean active,
        @JsonProperty("reason") String reason,
        @JsonProperty("gap_from") String gapFrom,
        @JsonProperty("gap_to") String gapTo,
        @JsonProperty("at_ms") long atMs,
        @JsonProperty("slot_lag_bytes") Long slotLagBytes) {

    /** A status without the slot's lag. */
    public CdcStatus(String instance, boolean active, String reason, String gapFrom, String gapTo, long atMs) {
        this(instance, active, reason, gapFrom, gapTo, atMs, null);
    }

    /** The leader publishes its status at least this often, also when nothing changed. */
    public static final Duration HEARTBEAT = Duration.ofSeconds(5);
}
