package dev.aura.realtime.cdc.health;

import dev.aura.realtime.cdc.failure.CdcReason;
import java.time.Clock;
import java.time.Duration;

/**
 * The CDC's health as {@code /health} and the CDC status messages report it (docs/design.md C11).
 * Written by the poll loop, read by the HTTP server and the status publisher. Thread-safe.
 *
 * <p>{@code cdc_active} is true only while this process leads, the slot is healthy and a poll
 * succeeded within {@code staleAfter}.
 */
public final class CdcState {
    /** One consistent reading. {@code slot} may be null before the first inspection. */
    public record Snapshot(
            boolean active,
            boolean leader,
            CdcReason reason,
            String detail,
            SlotInfo slot,
            long lastPollOkAtMs,
            long polls,
            String gapFrom,
            String gapTo) {}

    private final Clock clock;
    private final Duration staleAfter;
    private boolean leader;
    private CdcReason reason = CdcReason.STARTING;
    private String detail = "waiting for the first poll";
    private SlotInfo slot;
    private long lastPollOkAtMs;
    private long polls;
    private String gapFrom;
    private String gapTo;

    public CdcState(Clock clock, Duration staleAfter) {
        this.clock = clock;
        this.staleAfter = staleAfter;
    }

    public synchronized void leading(boolean isLeader) {
        leader = isLeader;
        if (!isLeader) {
            reason = CdcReason.NOT_LEADER;
            detail = "another replica holds the lease";
        } else if (reason == CdcReason.NOT_LEADER) {
            reason = CdcReason.STARTING;
            detail = "leadership acquired; starting";
        }
    }

    /** Leadership is unavailable for a reason other than another holder (e.g. API server down). */
    public synchronized void notLeading(CdcReason why, String text) {
        leader = false;
        reason = why;
        detail = text;
    }

    public synchronized void failed(CdcReason why, String text) {
        reason = why;
        detail = text;
    }

    public synchronized void slot(SlotInfo info) {
        slot = info;
    }

    /** A slot was recreated: the changes between the two LSNs are lost. */
    public synchronized void gap(String from, String to) {
        gapFrom = from;
        gapTo = to;
    }

    /** A read of the slot (a poll's peek, or a stream's message or keepalive) succeeded. */
    public synchronized void readSucceeded() {
        lastPollOkAtMs = clock.millis();
        polls++;
        reason = null;
        detail = null;
    }

    public synchronized Snapshot snapshot() {
        long now = clock.millis();
        boolean fresh = lastPollOkAtMs > 0 && now - lastPollOkAtMs <= staleAfter.toMillis();
        boolean slotOk = slot != null && !slot.lost();
        boolean active = leader && reason == null && fresh && slotOk;
        CdcReason r = reason;
        String d = detail;
        if (!active && r == null) {
            r = !leader ? CdcReason.NOT_LEADER : !slotOk ? CdcReason.SLOT_LOST : CdcReason.POLL_STALLED;
            d = r == CdcReason.POLL_STALLED ? "no successful poll for " + (now - lastPollOkAtMs) + " ms" : r.code();
        }
        return new Snapshot(
                active, leader, active ? null : r, active ? null : d, slot, lastPollOkAtMs, polls, gapFrom, gapTo);
    }
}
