package dev.aura.realtime.cdc.slot;

import dev.aura.realtime.cdc.catalog.EnabledTables;
import dev.aura.realtime.cdc.catalog.EnabledTablesSource;
import dev.aura.realtime.cdc.decode.MalformedWalRowException;
import dev.aura.realtime.cdc.decode.Wal2JsonDecoder;
import dev.aura.realtime.cdc.decode.WalMessage;
import dev.aura.realtime.cdc.event.ChangeSink;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.fence.LeaderWork;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.health.SlotInfo;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.lsn.Lsn;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What both ways of reading the slot share (docs/design.md C2–C4, C12), run while this process
 * leads: a dedicated connection to {@code POSTGRES_REPLICATION_URL} (session pinned to
 * {@code DateStyle=ISO}, {@code TimeZone=UTC}, {@code extra_float_digits=3}), the prerequisite
 * checks, the slot created if absent and recreated when lost (logging the LSN gap). Any failure
 * is classified ({@link CdcReason}), shown in {@code /health}, and retried with exponential
 * backoff; the loop never exits on its own. Interrupting the thread (leadership lost, shutdown)
 * stops it and closes the connections.
 *
 * <p>Both subclasses hand the same decoded changes to the same sink and confirm the slot only
 * past commits whose every change NATS confirmed, so they publish identical events with
 * identical ids for the same WAL, and a failure anywhere before a confirmation means the changes
 * are read again (at least once).
 */
public abstract class SlotReader implements LeaderWork {
    /**
     * wal2json's options, the same for both sources so both decode identical rows (format v2 with
     * begin/commit rows, commit timestamps, type OIDs, primary keys and LSNs); each source adds
     * {@code add-tables} ({@link dev.aura.realtime.cdc.catalog.EnabledTables#addTablesOption}).
     */
    static final Map<String, String> WAL2JSON_OPTIONS = wal2jsonOptions();

    private static Map<String, String> wal2jsonOptions() {
        Map<String, String> o = new LinkedHashMap<>();
        o.put("format-version", "2");
        o.put("include-transaction", "1");
        o.put("include-timestamp", "1");
        o.put("include-type-oids", "1");
        o.put("include-types", "0");
        o.put("include-pk", "1");
        o.put("include-lsn", "1");
        o.put("include-xids", "1"); // the RLS checks wait for the commit's visibility (C7)
        return Collections.unmodifiableMap(o);
    }

    private static final Logger log = LoggerFactory.getLogger(SlotReader.class);
    static final long INSPECT_EVERY_MS = 2000;

    /** Told when a lost slot was recreated, so clients can be warned (docs/design.md D6). */
    @FunctionalInterface
    public interface GapListener {
        void slotRecreated(Lsn lostFrom, Lsn resumedAt);
    }

    final ReaderSettings settings;
    final SlotManager slots;
    final ChangeSink sink;
    final EnabledTablesSource tables;
    final CdcState state;
    final CdcMetrics metrics;
    private final GapListener gapListener;

    SlotReader(
            ReaderSettings settings,
            SlotManager slots,
            ChangeSink sink,
            EnabledTablesSource tables,
            CdcState state,
            CdcMetrics metrics,
            GapListener gapListener) {
        this.settings = settings;
        this.slots = slots;
        this.sink = sink;
        this.tables = tables;
        this.state = state;
        this.metrics = metrics;
        this.gapListener = gapListener;
    }

    /**
     * Reads the slot until interrupted or failed.
     *
     * @param c the checked session (autocommit), for slot SQL
     * @param confirmed the slot's confirmed_flush_lsn
     */
    abstract void read(Connection c, LeaderGate gate, Lsn confirmed)
            throws SQLException, InterruptedException, FencedException, CdcFailure;

    @Override
    public void run(LeaderGate gate) throws InterruptedException {
        long backoffMs = 100;
        while (!Thread.currentThread().isInterrupted()) {
            long pollsBefore = state.snapshot().polls();
            try (Connection c = open()) {
                slots.checkPrerequisites(c);
                SlotInfo info = slots.ensure(c);
                if (info.lost()) {
                    info = recreate(c, info);
                }
                state.slot(info);
                read(c, gate, info.confirmedFlushLsn());
            } catch (CdcFailure f) {
                report(f.reason(), f.getMessage(), f.retriable());
                if (f.reason() == CdcReason.SLOT_LOST) {
                    recreateAfterError();
                }
            } catch (SQLException e) {
                CdcFailure f = CdcFailure.classify(e);
                report(f.reason(), f.getMessage(), f.retriable());
                if (f.reason() == CdcReason.SLOT_LOST) {
                    recreateAfterError();
                    continue;
                }
            } catch (FencedException e) {
                report(CdcReason.NOT_LEADER, "fenced: " + e.getMessage(), true);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (RuntimeException e) {
                log.error("[SlotReadFailed] unexpected failure reading the slot; retrying", e);
                report(CdcReason.ERROR, e.toString(), true);
            }
            // Reset the backoff only after a poll succeeded: a failure that recurs right after the
            // checks (e.g. slot_active_elsewhere at the first peek) must not retry ten times a second.
            if (state.snapshot().polls() > pollsBefore) {
                backoffMs = 100;
            }
            Thread.sleep(backoffMs);
            backoffMs = Math.min(backoffMs * 2, settings.maxBackoff().toMillis());
        }
        log.info("slot reader stopped (slot {})", slots.slotName());
    }

    /**
     * Decodes one wal2json row and hands a change of an enabled project to the sink.
     *
     * @param row the row's UTF-8 JSON; the change keeps references into it
     * @return the decoded message
     */
    WalMessage handle(Wal2JsonDecoder decoder, EnabledTables enabled, Lsn rowLsn, byte[] row, int off, int len)
            throws CdcFailure, InterruptedException {
        WalMessage msg;
        try {
            msg = decoder.decode(rowLsn, row, off, len);
        } catch (MalformedWalRowException e) {
            // a B or C row, or a change without its schema: no project to charge it to (never
            // expected from wal2json; a tenant's values are read after the schema, docs/design.md C13)
            throw CdcFailure.retriable(CdcReason.ERROR, "malformed wal2json row: " + e.getMessage(), e);
        }
        if (msg instanceof WalMessage.Change ch) {
            RowChange change = ch.change();
            String project = enabled.projectOf(change.schema());
            if (project != null) {
                String delivered = enabled.deliveredName(change.schema(), change.table());
                if (!delivered.equals(change.table())) { // a partition: delivered under its enabled root (C5)
                    change = change.withTable(delivered);
                }
                sink.accept(change, project);
            }
        }
        return msg;
    }

    /** The slot's row, failing when it vanished or was lost; exported to /health and metrics. */
    SlotInfo inspect(Connection c) throws SQLException, CdcFailure {
        SlotInfo info =
                slots.inspect(c).orElseThrow(() -> new CdcFailure(CdcReason.SLOT_LOST, "slot vanished", true, null));
        if (info.lost()) {
            throw new CdcFailure(CdcReason.SLOT_LOST, "wal_status = lost", true, null);
        }
        observe(info);
        return info;
    }

    private SlotInfo recreate(Connection c, SlotInfo lost) throws CdcFailure, SQLException {
        SlotInfo fresh = slots.recreate(c);
        Lsn from = lost.confirmedFlushLsn() == null ? lost.restartLsn() : lost.confirmedFlushLsn();
        Lsn to = fresh.confirmedFlushLsn();
        long bytes = from == null || to == null ? -1 : to.bytesAfter(from);
        log.error(
                "[SlotRecreated] slot {} was lost (wal_status=lost: its WAL was removed past max_slot_wal_keep_size); recreated it. "
                        + "Changes between {} and {} ({} bytes of WAL) are lost for good.",
                slots.slotName(),
                from,
                to,
                bytes);
        metrics.slotRecreations.increment();
        state.gap(String.valueOf(from), String.valueOf(to));
        // Not active until the new slot was read once: clients first hear "lost, with this gap", then "active".
        state.failed(CdcReason.SLOT_LOST, "slot recreated; changes between " + from + " and " + to + " are lost");
        gapListener.slotRecreated(from, to);
        return fresh;
    }

    private void recreateAfterError() {
        try (Connection c = open()) {
            SlotInfo info = slots.inspect(c).orElse(null);
            if (info != null) {
                state.slot(recreate(c, info));
            }
        } catch (SQLException | CdcFailure e) {
            log.warn("[SlotRecreateFailed] could not recreate the lost slot yet: {}", e.getMessage());
        }
    }

    private void observe(SlotInfo info) {
        state.slot(info);
        metrics.slot(info.lagBytes(), info.redecodeBytes(), info.retainedBytes(), info.safeWalSize());
        if (info.redecodeBytes() > settings.redecodeWarnBytes()) {
            log.warn(
                    "[RedecodeBacklog] slot {}: restart_lsn is {} bytes behind confirmed_flush_lsn: a long-open transaction pins it and "
                            + "every poll or stream restart re-decodes that WAL. Find it in pg_stat_activity (xact_start) and end it.",
                    slots.slotName(),
                    info.redecodeBytes());
        }
    }

    private void report(CdcReason reason, String detail, boolean retriable) {
        state.failed(reason, detail);
        if (retriable) {
            log.warn("[CdcNotActive] {}: {}", reason.code(), detail);
        } else {
            log.error("[CdcNotActive] {}: {} (retrying, but this needs an operator)", reason.code(), detail);
        }
    }

    /** The session settings every decoding session runs with: values decode the same on every server. */
    static final String[][] SESSION = {{"DateStyle", "ISO"}, {"TimeZone", "UTC"}, {"extra_float_digits", "3"}};

    Connection open() throws SQLException {
        Properties props = new Properties();
        props.setProperty("ApplicationName", "aura-cdc-worker");
        props.setProperty("tcpKeepAlive", "true");
        Connection c = DriverManager.getConnection(settings.replicationUrl(), props);
        try (Statement s = c.createStatement()) {
            for (String[] setting : SESSION) {
                s.execute("SET " + setting[0] + " = '" + setting[1] + "'");
            }
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    static Lsn flushLsn(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_current_wal_flush_lsn()::text")) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }

    static Lsn max(Lsn a, Lsn b) {
        if (a == null) {
            return b;
        }
        return b == null || a.compareTo(b) >= 0 ? a : b;
    }
}
