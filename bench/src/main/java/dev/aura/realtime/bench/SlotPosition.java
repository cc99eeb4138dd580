package dev.aura.realtime.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;

/**
 * Where a replication slot's reader stands (issue 39, finding 4): the slot's
 * {@code confirmed_flush_lsn} and, for a streaming reader that is connected, its walsender's
 * {@code sent_lsn} and the bytes queued on the loopback socket between them (the reader's receive
 * queue and the walsender's send queue, read with {@code ss}). A paused (SIGSTOPped) streaming
 * reader is still connected: its walsender goes on decoding and sending until those socket
 * buffers are full, so part of a backlog may be decoded and sitting in the reader's socket before
 * its turn starts. Reading this before the backlog, after it, and at the reader's resume shows
 * whether it does and how much.
 *
 * @param confirmed the slot's confirmed_flush_lsn (bytes)
 * @param sent the walsender's sent_lsn (bytes); -1 when no walsender serves the slot
 * @param readerQueue bytes in the reader's socket receive queue; -1 when unknown
 * @param senderQueue bytes in the walsender's socket send queue; -1 when unknown
 */
record SlotPosition(long confirmed, long sent, long readerQueue, long senderQueue) {
    private static final String SQL = """
            SELECT (s.confirmed_flush_lsn - '0/0'::pg_lsn)::bigint, (r.sent_lsn - '0/0'::pg_lsn)::bigint,
                   r.client_port
            FROM pg_replication_slots s LEFT JOIN pg_stat_replication r ON r.pid = s.active_pid
            WHERE s.slot_name = ?""";

    /** Reads the slot's position now; {@code (-1, -1, -1, -1)} when the slot does not exist. */
    static SlotPosition of(Stack s, String slot) {
        try (Connection c = s.pg.connect();
                PreparedStatement ps = c.prepareStatement(SQL)) {
            ps.setString(1, slot);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return new SlotPosition(-1, -1, -1, -1);
                }
                long confirmed = rs.getLong(1);
                long sent = rs.getObject(2) == null ? -1 : rs.getLong(2);
                int port = rs.getObject(3) == null ? -1 : rs.getInt(3);
                long[] q = port <= 0 ? new long[] {-1, -1} : queues(port);
                return new SlotPosition(confirmed, sent, q[0], q[1]);
            }
        } catch (Exception e) {
            throw new IllegalStateException("cannot read the position of slot " + slot, e);
        }
    }

    /** The current WAL insert position, in bytes. */
    static long walNow(Stack s) {
        return Long.parseLong(s.pg.queryOne("SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint"));
    }

    /**
     * {reader's Recv-Q, walsender's Send-Q} of the loopback connection whose client port is
     * {@code port}, from {@code ss}; -1 where not found.
     */
    private static long[] queues(int port) {
        String out = Procs.run(
                List.of("ss", "-tnH", "state", "established", "( sport = :" + port + " or dport = :" + port + " )"));
        long recv = -1;
        long send = -1;
        for (String line : out.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 4) {
                continue;
            }
            if (f[2].endsWith(":" + port)) {
                recv = Long.parseLong(f[0]); // the reader's end: what it has not read yet
            } else if (f[3].endsWith(":" + port)) {
                send = Long.parseLong(f[1]); // the walsender's end: what it could not hand over yet
            }
        }
        return new long[] {recv, send};
    }

    /** How far {@code sent} (or, without a walsender, {@code confirmed}) is into the backlog [from, to): 0..1. */
    double into(long from, long to) {
        long at = sent >= 0 ? sent : confirmed;
        if (to <= from || at < 0) {
            return Double.NaN;
        }
        return Math.max(0, Math.min(1, (double) (at - from) / (to - from)));
    }

    /** "sent 23 %, 6.1 MB queued" (the walsender's sent_lsn into the backlog), or "confirmed 0 %" without one. */
    String describe(long from, long to) {
        if (confirmed < 0) {
            return "no slot";
        }
        if (sent < 0) {
            return String.format("confirmed %.0f %%", 100 * into(from, to));
        }
        return String.format(
                "sent %.0f %%, %s queued",
                100 * into(from, to), mb(Math.max(0, readerQueue) + Math.max(0, senderQueue)));
    }

    static String mb(long bytes) {
        return String.format("%.1f MB", bytes / 1e6);
    }
}
