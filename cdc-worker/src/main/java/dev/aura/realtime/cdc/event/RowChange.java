package dev.aura.realtime.cdc.event;

import dev.aura.realtime.common.lsn.Lsn;
import java.util.List;

/**
 * One I/U/D/T change of a committed transaction, as decoded from a wal2json format-version 2 row.
 *
 * @param action 'I', 'U', 'D' or 'T'
 * @param schema real schema name (e.g. {@code project_<uuid>})
 * @param table table name, unquoted
 * @param columns new tuple ({@code columns}); empty for D and T; unchanged TOAST columns absent
 * @param identity old tuple / replica identity ({@code identity}); empty for I and T
 * @param pk primary key column names ({@code include-pk})
 * @param commitLsn LSN of the transaction's commit record (wal2json {@code lsn} of the B row)
 * @param ordinal 0-based position of this change among the transaction's I/U/D/T rows
 * @param commitTimestamp commit time in ISO 8601 UTC with {@code Z} (from the transaction's B row)
 * @param raw the wal2json row this change was decoded from (its values point into it); its size is
 *     what the change costs in the worker's byte-bounded queues, and it is what the late lane and
 *     the quarantine keep (docs/design.md C13, C14)
 * @param cut true when Postgres cut the row's large values because the row was too large
 *     (docs/design.md C6): the event reports {@code Error 413: Payload Too Large}
 * @param undecodable null, or why the row could not be decoded (our own words): the change then
 *     carries only what was read before that, and becomes its project's fault (docs/design.md C13)
 * @param xid the transaction's id (wal2json {@code include-xids}, the B row's {@code xid}), 0 when
 *     unknown: the RLS checks wait until it is visible (docs/design.md C7, "Commit visibility")
 */
public record RowChange(
        char action,
        String schema,
        String table,
        List<DecodedColumn> columns,
        List<DecodedColumn> identity,
        List<String> pk,
        Lsn commitLsn,
        long ordinal,
        String commitTimestamp,
        RawRow raw,
        boolean cut,
        String undecodable,
        long xid) {

    /** A change without its transaction id. */
    public RowChange(
            char action,
            String schema,
            String table,
            List<DecodedColumn> columns,
            List<DecodedColumn> identity,
            List<String> pk,
            Lsn commitLsn,
            long ordinal,
            String commitTimestamp,
            RawRow raw,
            boolean cut,
            String undecodable) {
        this(
                action,
                schema,
                table,
                columns,
                identity,
                pk,
                commitLsn,
                ordinal,
                commitTimestamp,
                raw,
                cut,
                undecodable,
                0);
    }

    /** A decoded change. */
    public RowChange(
            char action,
            String schema,
            String table,
            List<DecodedColumn> columns,
            List<DecodedColumn> identity,
            List<String> pk,
            Lsn commitLsn,
            long ordinal,
            String commitTimestamp,
            RawRow raw,
            boolean cut) {
        this(action, schema, table, columns, identity, pk, commitLsn, ordinal, commitTimestamp, raw, cut, null);
    }

    /** Size of the wal2json row text. */
    public int rowBytes() {
        return raw.len();
    }

    /** The same change delivered under another table name (a partition under its enabled root, C5). */
    public RowChange withTable(String deliveredTable) {
        return new RowChange(
                action,
                schema,
                deliveredTable,
                columns,
                identity,
                pk,
                commitLsn,
                ordinal,
                commitTimestamp,
                raw,
                cut,
                undecodable,
                xid);
    }

    /** {@code <commit LSN>:<ordinal>}, stable across re-decoding of the same WAL. */
    public String eventId() {
        return commitLsn + ":" + ordinal;
    }

    public String type() {
        return switch (action) {
            case 'I' -> "INSERT";
            case 'U' -> "UPDATE";
            case 'D' -> "DELETE";
            case 'T' -> "TRUNCATE";
            default -> throw new IllegalStateException("not a row action: " + action);
        };
    }

    /**
     * What holding this change costs the heap, roughly: its row text plus the objects decoded
     * from it. The pipeline's queues are bounded by the sum of these (docs/design.md C7).
     */
    public long heapCost() {
        return raw.len() + 256L + 96L * (columns.size() + identity.size());
    }
}
