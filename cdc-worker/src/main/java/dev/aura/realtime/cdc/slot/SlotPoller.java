package dev.aura.realtime.cdc.slot;

import dev.aura.realtime.cdc.catalog.EnabledTables;
import dev.aura.realtime.cdc.catalog.EnabledTablesSource;
import dev.aura.realtime.cdc.decode.Wal2JsonDecoder;
import dev.aura.realtime.cdc.event.ChangeSink;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.lsn.Lsn;
import io.micrometer.core.instrument.Timer;
import java.io.ByteArrayOutputStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.stream.Collectors;

/**
 * The poll source, {@code CDC_SOURCE=poll} (docs/design.md C4): the SQL interface.
 *
 * <ol>
 *   <li>Read {@code pg_current_wal_flush_lsn()} as {@code upto}: decoding reads only flushed WAL.
 *       Then read the enabled-table list fresh (not cached): a list is valid up to the flush
 *       position read before it, so advancing to {@code upto} never skips a change of a table
 *       (or partition) enabled or created before {@code upto} (docs/design.md C5).
 *   <li>With no enabled table, do not peek (an absent add-tables means every table); advance to
 *       {@code upto} and sleep {@code CDC_IDLE_BACKOFF_MS}.
 *   <li>{@code pg_logical_slot_peek_changes(slot, upto, batch, ...)}, streamed with a fetch size
 *       in a read transaction, each change handed to the sink as it is read.
 *       {@code upto_nchanges} is only checked at commit boundaries, so one transaction always
 *       comes back whole; streaming keeps memory flat.
 *   <li>Flush the sink: every change is published and NATS confirmed it. Check the fence.
 *   <li>Advance: when fewer rows than the batch size came back, everything up to {@code upto}
 *       was seen, so advance to {@code upto}; otherwise advance to the last commit row's LSN only.
 *       Advancing to a change row would re-deliver its transaction.
 *   <li>Poll again at once if rows came back, else sleep {@code CDC_IDLE_BACKOFF_MS}.
 * </ol>
 *
 * <b>Bytes, not rows.</b> The driver holds one fetch of result rows, and a result row is at most
 * {@value #PART_BYTES} bytes of text (plus its hex form for a part): a wal2json row larger than
 * that is sent in parts (bytea slices of its UTF-8, reassembled here), and the fetch size is
 * lowered so that one fetch fits {@code fetchBytes}. A row so large that it cannot hold two
 * records of {@code CDC_MAX_RECORD_BYTES} is cut by Postgres before it is sent (values over 64
 * bytes removed, {@code aura_cut_bytes} added; the event says {@code Error 413}), so no value
 * of any size is ever sent to the worker whole.
 *
 * <p><b>Backlogs.</b> Every peek decodes from the slot's {@code restart_lsn}, which Postgres
 * moves only when decoding meets a running-transactions record (logged about every 15 s), so
 * draining a backlog 1,000 rows at a time re-decodes the same WAL over and over (quadratic; see
 * docs/performance-analysis-2026-12.md). After a full batch the next peek therefore asks for four times as many
 * changes, up to {@value #MAX_BATCH_GROWTH} × {@code CDC_BATCH_SIZE}; the first non-full batch
 * returns to {@code CDC_BATCH_SIZE}. A failure anywhere before the advance leaves the slot where
 * it was: the batch is read again and re-published (at least once), each change with its
 * {@code Aura-Event-Id} (commit LSN and ordinal).
 */
public final class SlotPoller extends SlotReader {
    /** Largest multiple of CDC_BATCH_SIZE a backlog may grow the batch to. */
    static final int MAX_BATCH_GROWTH = 256;
    /** A wal2json row longer than this is sent in parts of this many bytes. */
    static final int PART_BYTES = 32_768;
    /** Bytes the driver holds at most for one result row: a part's hex text, plus the row's other columns. */
    private static final int RESULT_ROW_BYTES = 2 * PART_BYTES + 1024;
    /** {@link #WAL2JSON_OPTIONS} as the peek's arguments, then {@code add-tables} as a parameter. */
    private static final String OPTIONS = WAL2JSON_OPTIONS.entrySet().stream()
                    .map(o -> "'" + o.getKey() + "', '" + o.getValue() + "', ")
                    .collect(Collectors.joining())
            + "'add-tables', ?";
    /**
     * A row too large to hold two records of the limit ({@code ? = } its byte bound), as JSON with
     * every value of more than 64 bytes replaced by {@code "cut": true} (json, not jsonb: jsonb
     * refuses values over 256 MB).
     */
    private static final String CUT_COLUMNS = """
            (SELECT json_agg(CASE WHEN octet_length((e.c -> 'value')::text) <= 66 THEN e.c
                    ELSE json_build_object('name', e.c -> 'name', 'typeoid', e.c -> 'typeoid', 'cut', true) END ORDER BY e.o)
               FROM json_array_elements(y.j -> '%s') WITH ORDINALITY AS e(c, o))""";

    private static final String CUT = "(SELECT json_build_object('action', y.j -> 'action', 'lsn', y.j -> 'lsn', "
            + "'schema', y.j -> 'schema', 'table', y.j -> 'table', 'pk', y.j -> 'pk', 'columns', "
            + CUT_COLUMNS.formatted("columns") + ", 'identity', " + CUT_COLUMNS.formatted("identity")
            + ", 'aura_cut_bytes', octet_length(x.data))::text FROM (SELECT x.data::json AS j) AS y)";
    /**
     * The peek, each row whole when short, else in parts. OFFSET 0 keeps the planner from
     * inlining the subqueries, so the cut and the UTF-8 conversion run once per row; the lateral
     * join emits each row's parts right after it (a nested loop over the function's rows, in
     * order), which the reader checks.
     */
    private static final String PEEK =
            "SELECT p.n, p.lsn::text, c.i, c.last, CASE WHEN c.i IS NULL THEN p.d END, c.part"
                    + " FROM (SELECT x.n, x.lsn, CASE WHEN octet_length(x.data) <= ? THEN x.data ELSE " + CUT
                    + " END AS d"
                    + " FROM pg_logical_slot_peek_changes(?, ?::pg_lsn, ?, " + OPTIONS
                    + ") WITH ORDINALITY AS x(lsn, xid, data, n)"
                    + " OFFSET 0) p"
                    + " LEFT JOIN LATERAL (SELECT g.i, l.last, substring(l.b FROM g.i * " + PART_BYTES + " + 1 FOR "
                    + PART_BYTES
                    + ") AS part FROM (SELECT convert_to(p.d, 'UTF8') AS b, (octet_length(p.d) - 1) / " + PART_BYTES
                    + " AS last"
                    + " WHERE octet_length(p.d) > " + PART_BYTES
                    + " OFFSET 0) l, generate_series(0, l.last) AS g(i)) c ON true";

    public SlotPoller(
            ReaderSettings settings,
            SlotManager slots,
            ChangeSink sink,
            EnabledTablesSource tables,
            CdcState state,
            CdcMetrics metrics,
            GapListener gapListener) {
        super(settings, slots, sink, tables, state, metrics, gapListener);
    }

    /** The byte bound of a row sent whole: anything longer cannot hold two records within the limit. */
    long rowCap() {
        return 2L * settings.maxRecordBytes() + 512 * 1024;
    }

    /** The fetch size: CDC_FETCH_SIZE, lowered so that one fetch fits the driver's share of the buffer. */
    int fetchSize() {
        long fits = Math.max(1, settings.fetchBytes() / RESULT_ROW_BYTES);
        return (int) Math.min(settings.fetchSize(), fits);
    }

    @Override
    void read(Connection c, LeaderGate gate, Lsn confirmed)
            throws SQLException, InterruptedException, FencedException, CdcFailure {
        Wal2JsonDecoder decoder = new Wal2JsonDecoder();
        long lastInspect = 0;
        int batch = settings.batchSize();
        while (!Thread.currentThread().isInterrupted()) {
            gate.checkFence();
            long now = System.currentTimeMillis();
            if (now - lastInspect >= INSPECT_EVERY_MS) {
                confirmed = max(confirmed, inspect(c).confirmedFlushLsn());
                lastInspect = now;
            }
            Timer.Sample sample = Timer.start();
            // The list is valid up to the flush position read before it (C5): read in this order,
            // fresh, advancing to upto never skips a change of a table enabled before upto.
            Lsn upto = flushLsn(c);
            EnabledTables enabled = tables.read();
            int rows = 0;
            if (!enabled.isEmpty()) {
                rows = peek(c, decoder, enabled, upto, batch);
                sink.flush();
            }
            boolean full = rows >= batch;
            Lsn target = full ? decoder.lastCommitEnd() : upto;
            gate.checkFence();
            if (target != null && target.isAfter(confirmed)) {
                confirmed = slots.advance(c, target);
            }
            metrics.polls.increment();
            metrics.batchRows.record(rows);
            sample.stop(metrics.pollDuration);
            state.readSucceeded();
            long maxBatch = (long) settings.batchSize() * MAX_BATCH_GROWTH;
            batch = full
                    ? (int) Math.min(Math.min((long) batch * 4, maxBatch), Integer.MAX_VALUE)
                    : settings.batchSize();
            if (rows == 0) {
                Thread.sleep(settings.idleBackoff().toMillis());
            }
        }
    }

    /** Streams one peek into the sink. @return rows read (including B/C rows) */
    private int peek(Connection c, Wal2JsonDecoder decoder, EnabledTables enabled, Lsn upto, int batch)
            throws SQLException, InterruptedException, CdcFailure {
        decoder.resetBatch();
        int rows = 0;
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement(PEEK)) {
            ps.setFetchSize(fetchSize());
            ps.setLong(1, rowCap());
            ps.setString(2, slots.slotName());
            ps.setString(3, upto.toString());
            ps.setInt(4, batch);
            ps.setString(5, enabled.addTablesOption());
            try (ResultSet rs = ps.executeQuery()) {
                long lastN = 0;
                ByteArrayOutputStream parts = null;
                while (rs.next()) {
                    long n = rs.getLong(1);
                    int part = rs.getInt(3);
                    boolean whole = rs.wasNull();
                    boolean inOrder = whole || part == 0 ? n > lastN && parts == null : n == lastN && parts != null;
                    if (!inOrder) {
                        throw CdcFailure.retriable(
                                CdcReason.ERROR, "peek returned row " + n + " (part " + part + ") out of order", null);
                    }
                    lastN = n;
                    byte[] row;
                    if (whole) {
                        row = rs.getBytes(5);
                    } else {
                        int last = rs.getInt(4);
                        if (part == 0) {
                            parts = new ByteArrayOutputStream((last + 1) * PART_BYTES);
                        }
                        parts.writeBytes(rs.getBytes(6));
                        if (part < last) {
                            continue;
                        }
                        row = parts.toByteArray();
                        parts = null;
                    }
                    rows++;
                    handle(decoder, enabled, Lsn.parse(rs.getString(2)), row, 0, row.length);
                }
            }
            c.commit();
        } finally {
            if (!c.isClosed()) {
                try {
                    c.rollback();
                } finally {
                    c.setAutoCommit(true);
                }
            }
        }
        return rows;
    }
}
