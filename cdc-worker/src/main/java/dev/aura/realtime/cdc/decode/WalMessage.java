package dev.aura.realtime.cdc.decode;

import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.common.lsn.Lsn;

/** A decoded wal2json format-version 2 row: a transaction boundary or a row change. */
public sealed interface WalMessage {
    /**
     * {@code {"action":"B", "lsn": <commit record>, "nextlsn": <end of commit>, "timestamp"}}.
     * wal2json decodes a transaction only once it committed, so the commit LSN is known here.
     */
    record Begin(Lsn commitLsn, Lsn endLsn, String commitTimestamp) implements WalMessage {}

    /** {@code {"action":"C"}}; {@code endLsn} is the row's LSN, the only safe slot advance target. */
    record Commit(Lsn endLsn) implements WalMessage {}

    /** An I/U/D/T row. */
    record Change(RowChange change) implements WalMessage {}

    /** Any other action (e.g. 'M' logical messages), ignored. */
    record Other(String action) implements WalMessage {}
}
