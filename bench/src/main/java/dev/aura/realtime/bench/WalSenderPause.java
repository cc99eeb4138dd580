package dev.aura.realtime.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.Set;

/**
 * Pauses the walsender that serves a slot while its reader is paused (issue 39, finding 4). A
 * SIGSTOPped streaming reader stays connected, and its walsender goes on decoding the backlogs
 * written meanwhile into the socket until its buffers are full (in a quick run, all of a 20,000-row
 * backlog for Debezium), so the reader's turn would start with part of its work done by Postgres
 * before the clock started, which the ceiling (a fresh slot) never gets. Stopping the walsender
 * as well takes that head start away.
 *
 * <p>A Postgres backend must never be stopped while it holds a lock other backends wait for: the
 * walsender is stopped only while it waits for WAL in its main loop, outside any transaction
 * (wait events {@code WalSenderWaitForWAL} or {@code WalSenderMain}); the wait event is read again
 * after the stop, and a stop that caught it anywhere else is undone and tried again.
 */
final class WalSenderPause {
    private static final Set<String> IDLE = Set.of("WalSenderWaitForWAL", "WalSenderMain");
    private static final String SQL = "SELECT a.pid, a.wait_event FROM pg_replication_slots s"
            + " JOIN pg_stat_activity a ON a.pid = s.active_pid WHERE s.slot_name = ?";

    private final Stack s;
    private final String slot;
    private long stopped = -1;
    /** Stops that found the walsender busy for all their tries (it ran on). */
    private int missed;

    WalSenderPause(Stack s, String slot) {
        this.s = s;
        this.slot = slot;
    }

    /** Stops the slot's walsender once it is idle; does nothing when no walsender serves the slot. */
    void stop() {
        for (int attempt = 0; attempt < 400 && stopped < 0; attempt++) {
            Object[] w = walsender();
            if (w == null) {
                return;
            }
            long pid = (Long) w[0];
            if (IDLE.contains((String) w[1])) {
                signal("-STOP", pid);
                Object[] again = walsender();
                if (again != null && (Long) again[0] == pid && IDLE.contains((String) again[1])) {
                    stopped = pid;
                    s.stoppedBackends.add(pid);
                    return;
                }
                signal("-CONT", pid);
            }
            Procs.sleep(5);
        }
        missed++;
    }

    /** Lets the walsender run again (before its reader resumes). */
    void resume() {
        if (stopped > 0) {
            signal("-CONT", stopped);
            s.stoppedBackends.remove(stopped);
            stopped = -1;
        }
    }

    int missed() {
        return missed;
    }

    private static void signal(String sig, long pid) {
        Procs.run(List.of("kill", sig, Long.toString(pid)));
    }

    /** {pid, wait_event} of the slot's walsender, null when none. */
    private Object[] walsender() {
        try (Connection c = s.pg.connect();
                PreparedStatement ps = c.prepareStatement(SQL)) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new Object[] {rs.getLong(1), String.valueOf(rs.getString(2))} : null;
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the walsender of slot " + slot, e);
        }
    }
}
