package dev.aura.realtime.cdc.event;

/**
 * A change kept in a JetStream stream instead of being delivered now (docs/design.md C13, C14):
 * in its project's late lane, or in its project's quarantine. It holds the wal2json row as read
 * and what decoding it again needs (the transaction's commit time and the change's id), so the
 * late lane (or an operator's re-publish from the quarantine) runs it through the same pipeline.
 *
 * @param projectId the project the change belongs to
 * @param eventId {@code <commit LSN>:<ordinal>}, the change's id on every path
 * @param commitTimestamp the transaction's commit time, ISO 8601 UTC
 * @param table the table the change is delivered under (a partition's enabled root, C5)
 * @param raw the wal2json row
 * @param undecodable null, or why the row could not be decoded (our own words)
 * @param xid the transaction's id, 0 when unknown: the late lane's checks wait for its visibility too
 */
public record HeldChange(
        String projectId,
        String eventId,
        String commitTimestamp,
        String table,
        RawRow raw,
        String undecodable,
        long xid) {

    /** The change as the pipeline read it. */
    public static HeldChange of(RowChange change, String projectId) {
        return new HeldChange(
                projectId,
                change.eventId(),
                change.commitTimestamp(),
                change.table(),
                change.raw(),
                change.undecodable(),
                change.xid());
    }
}
