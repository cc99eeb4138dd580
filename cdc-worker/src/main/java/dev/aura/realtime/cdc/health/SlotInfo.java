package dev.aura.realtime.cdc.health;

import dev.aura.realtime.common.lsn.Lsn;

/**
 * One reading of {@code pg_replication_slots} for our slot plus the server's WAL flush position.
 *
 * @param name slot name
 * @param plugin output plugin (wal2json)
 * @param walStatus {@code reserved | extended | unreserved | lost} (Postgres 13+)
 * @param safeWalSize bytes of WAL that can still be written before the slot is lost; null when unlimited
 * @param restartLsn oldest WAL the slot needs; each peek re-decodes from here
 * @param confirmedFlushLsn what consumers confirmed; advanced by {@code pg_replication_slot_advance}
 * @param activePid backend pid of the process using the slot, or null
 * @param flushLsn {@code pg_current_wal_flush_lsn()}
 */
public record SlotInfo(
        String name,
        String plugin,
        String walStatus,
        Long safeWalSize,
        Lsn restartLsn,
        Lsn confirmedFlushLsn,
        Integer activePid,
        Lsn flushLsn) {

    /** Bytes of WAL written but not yet confirmed by us (flush − confirmed_flush). */
    public long lagBytes() {
        return confirmedFlushLsn == null ? 0 : Math.max(0, flushLsn.bytesAfter(confirmedFlushLsn));
    }

    /** Bytes between restart_lsn and confirmed_flush_lsn: WAL each poll re-decodes (grows with long-open transactions). */
    public long redecodeBytes() {
        return restartLsn == null || confirmedFlushLsn == null
                ? 0
                : Math.max(0, confirmedFlushLsn.bytesAfter(restartLsn));
    }

    /** Bytes of WAL the slot retains (flush − restart_lsn). */
    public long retainedBytes() {
        return restartLsn == null ? 0 : Math.max(0, flushLsn.bytesAfter(restartLsn));
    }

    public boolean lost() {
        return "lost".equals(walStatus);
    }
}
