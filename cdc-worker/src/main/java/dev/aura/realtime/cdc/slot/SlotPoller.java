package dev.aura.realtime.cdc.slot;

import dev.aura.realtime.cdc.decode.MalformedWalRowException;
import dev.aura.realtime.cdc.decode.Wal2JsonDecoder;
import dev.aura.realtime.cdc.decode.WalMessage;
import dev.aura.realtime.cdc.event.ChangeSink;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.fence.LeaderWork;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.health.SlotInfo;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.platform.EnabledTables;
import dev.aura.realtime.common.lsn.Lsn;
import io.micrometer.core.instrument.Timer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Properties;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The CDC poll loop (docs/design.md C2–C4), run while this process leads.
 *
 * <h2>Lifecycle</h2>
 * Open a dedicated connection to {@code POSTGRES_REPLICATION_URL} (session pinned to
 * {@code DateStyle=ISO}, {@code TimeZone=UTC}, {@code extra_float_digits=3}); check the
 * prerequisites; create the slot if absent; recreate it when lost (logging the LSN gap). Any
 * failure is classified ({@link CdcReason}), shown in {@code /health}, and retried with
 * exponential backoff; the loop never exits on its own. Interrupting the thread (leadership
 * lost, shutdown) stops it and closes the connection.
 *
 * <h2>Poll loop</h2>
 * <ol>
 *   <li>Read {@code pg_current_wal_flush_lsn()} as {@code upto}: decoding reads only flushed WAL.
 *   <li>With no enabled table, do not peek (an absent add-tables means every table); advance to
 *       {@code upto} and sleep {@code CDC_IDLE_BACKOFF_MS}.
 *   <li>{@code pg_logical_slot_peek_changes(slot, upto, CDC_BATCH_SIZE, ...)}, streamed with a
 *       fetch size in a read transaction, each change handed to the sink as it is read.
 *       {@code upto_nchanges} is only checked at commit boundaries, so one transaction always
 *       comes back whole; streaming keeps memory flat (seed 000).
 *   <li>Flush the sink: every change is published and NATS confirmed it. Check the fence.
 *   <li>Advance: when fewer rows than the batch size came back, everything up to {@code upto}
 *       was seen, so advance to {@code upto} (keeps {@code confirmed_flush_lsn} moving while
 *       only unwatched tables change); otherwise advance to the last commit row's LSN only.
 *       Advancing to a change row would re-deliver its transaction.
 *   <li>Poll again at once if rows came back, else sleep {@code CDC_IDLE_BACKOFF_MS}.
 * </ol>
 * <b>Backlogs.</b> Every peek decodes from the slot's {@code restart_lsn}, which Postgres moves
 * only when decoding meets a running-transactions record (logged about every 15 s), so
 * draining a backlog 1,000 rows at a time re-decodes the same WAL over and over (quadratic; see
 * docs/performance.md). After a full batch the next peek therefore asks for four times as many
 * changes, up to {@value #MAX_BATCH_GROWTH} × {@code CDC_BATCH_SIZE}; the first non-full batch
 * returns to {@code CDC_BATCH_SIZE}. Memory stays flat at any batch size (rows are streamed).
 * A failure anywhere before the advance leaves the slot where it was: the batch is read again
 * and re-published (at least once). Each change keeps its {@code Aura-Event-Id} across re-reads
 * (commit LSN and ordinal), so receivers can drop duplicates by it.
 */
public final class SlotPoller implements LeaderWork {
    private static final Logger log = LoggerFactory.getLogger(SlotPoller.class);
    private static final String PEEK = """
            SELECT lsn::text, data FROM pg_logical_slot_peek_changes(?, ?::pg_lsn, ?,
              'format-version', '2', 'include-transaction', '1', 'include-timestamp', '1',
              'include-type-oids', '1', 'include-types', '0', 'include-pk', '1', 'include-lsn', '1',
              'add-tables', ?)""";
    private static final long INSPECT_EVERY_MS = 2000;
    /** Largest multiple of CDC_BATCH_SIZE a backlog may grow the batch to. */
    static final int MAX_BATCH_GROWTH = 256;

    /**
     * Settings of the poll loop.
     *
     * @param redecodeWarnBytes warn when restart_lsn lags confirmed_flush_lsn by more than this ({@code CDC_REDECODE_WARN_BYTES})
     */
    public record Settings(
            String replicationUrl,
            int batchSize,
            int fetchSize,
            Duration idleBackoff,
            Duration maxBackoff,
            long redecodeWarnBytes) {}

    private final Settings settings;
    private final SlotManager slots;
    private final ChangeSink sink;
    private final Supplier<EnabledTables> tables;
    private final CdcState state;
    private final CdcMetrics metrics;
    private final GapListener gapListener;

    /** Told when a lost slot was recreated, so clients can be warned (docs/design.md D6). */
    @FunctionalInterface
    public interface GapListener {
        void slotRecreated(Lsn lostFrom, Lsn resumedAt);
    }

    public SlotPoller(
            Settings settings,
            SlotManager slots,
            ChangeSink sink,
            Supplier<EnabledTables> tables,
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
                pollLoop(c, gate, info.confirmedFlushLsn());
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
                log.error("[PollLoopFailed] unexpected failure in the poll loop; retrying", e);
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
        log.info("poll loop stopped (slot {})", slots.slotName());
    }

    private void pollLoop(Connection c, LeaderGate gate, Lsn confirmed)
            throws SQLException, InterruptedException, FencedException, CdcFailure {
        Wal2JsonDecoder decoder = new Wal2JsonDecoder();
        long lastInspect = 0;
        int batch = settings.batchSize();
        while (!Thread.currentThread().isInterrupted()) {
            gate.checkFence();
            long now = System.currentTimeMillis();
            if (now - lastInspect >= INSPECT_EVERY_MS) {
                SlotInfo info = slots.inspect(c)
                        .orElseThrow(() -> new CdcFailure(CdcReason.SLOT_LOST, "slot vanished", true, null));
                if (info.lost()) {
                    throw new CdcFailure(CdcReason.SLOT_LOST, "wal_status = lost", true, null);
                }
                observe(info);
                confirmed = max(confirmed, info.confirmedFlushLsn());
                lastInspect = now;
            }
            Timer.Sample sample = Timer.start();
            EnabledTables enabled = tables.get();
            Lsn upto = flushLsn(c);
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
            state.pollSucceeded();
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
            ps.setFetchSize(settings.fetchSize());
            ps.setString(1, slots.slotName());
            ps.setString(2, upto.toString());
            ps.setInt(3, batch);
            ps.setString(4, enabled.addTablesOption());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    rows++;
                    WalMessage msg;
                    try {
                        msg = decoder.decode(Lsn.parse(rs.getString(1)), rs.getString(2));
                    } catch (MalformedWalRowException e) {
                        throw CdcFailure.retriable(CdcReason.ERROR, "malformed wal2json row: " + e.getMessage(), e);
                    }
                    if (msg instanceof WalMessage.Change ch) {
                        String project = enabled.projectOf(ch.change().schema());
                        if (project != null) {
                            sink.accept(ch.change(), project);
                        }
                    }
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
        // Not active until the new slot was polled once: clients first hear "lost, with this gap", then "active".
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
                            + "every poll re-decodes that WAL. Find it in pg_stat_activity (xact_start) and end it.",
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

    private Connection open() throws SQLException {
        Properties props = new Properties();
        props.setProperty("ApplicationName", "aura-cdc-worker");
        props.setProperty("tcpKeepAlive", "true");
        Connection c = DriverManager.getConnection(settings.replicationUrl(), props);
        try (Statement s = c.createStatement()) {
            s.execute("SET DateStyle = ISO");
            s.execute("SET TimeZone = 'UTC'");
            s.execute("SET extra_float_digits = 3");
        } catch (SQLException e) {
            c.close();
            throw e;
        }
        return c;
    }

    private static Lsn flushLsn(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_current_wal_flush_lsn()::text")) {
            rs.next();
            return Lsn.parse(rs.getString(1));
        }
    }

    private static Lsn max(Lsn a, Lsn b) {
        if (a == null) {
            return b;
        }
        return b == null || a.compareTo(b) >= 0 ? a : b;
    }
}
