package dev.aura.realtime.cdc.slot;

import dev.aura.realtime.cdc.catalog.EnabledTables;
import dev.aura.realtime.cdc.catalog.EnabledTablesSource;
import dev.aura.realtime.cdc.decode.Wal2JsonDecoder;
import dev.aura.realtime.cdc.decode.WalMessage;
import dev.aura.realtime.cdc.event.ChangeSink;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.health.CdcState;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.lsn.Lsn;
import java.nio.ByteBuffer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.postgresql.PGConnection;
import org.postgresql.PGProperty;
import org.postgresql.replication.LogSequenceNumber;
import org.postgresql.replication.PGReplicationStream;
import org.postgresql.replication.fluent.logical.ChainedLogicalStreamBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stream source, {@code CDC_SOURCE=stream} (docs/design.md C12): the same slot with the same
 * wal2json options, read over the logical replication protocol ({@code START_REPLICATION}) with
 * pgjdbc's replication API, so each WAL record is decoded once and commits arrive as they are
 * flushed.
 *
 * <ul>
 *   <li><b>Confirm only what NATS took.</b> After a commit, at once when the stream goes idle
 *       and at most every {@code confirmEvery} (200 ms) while rows keep coming, a barrier is
 *       placed behind the changes read so far; the reader goes on reading while they are
 *       published. When a barrier completed (every change before it published and NATS
 *       confirmed), the fence is checked and the commit's end LSN is sent as flushed and applied
 *       ({@code setFlushedLSN}, {@code forceUpdateStatus}): Postgres moves
 *       {@code confirmed_flush_lsn} only then. A failed barrier stops the stream; it restarts
 *       from the slot's confirmed position and the changes are published again (at least once,
 *       with the same event ids as the poll source: they come from the same wal2json rows).
 *   <li><b>Keepalives and status.</b> pgjdbc answers the server's keepalive requests while the
 *       reader calls {@code readPending()}, and sends the position every {@code statusInterval}.
 *   <li><b>The table filter.</b> {@code add-tables} is fixed when the stream starts, with a list
 *       read fresh after the flush position: the list is valid up to that position, its bound
 *       (docs/design.md C5). The reader never confirms beyond the bound: before it would, it
 *       re-reads (flush position, then list); an unchanged list moves the bound, a changed one
 *       ends the stream, which restarts from the confirmed position with the new list (changes
 *       after it are decoded again, at least once). So a table or partition enabled or created
 *       through any path (another replica's control API, SQL) loses nothing. With no enabled
 *       table it does not stream at all (no add-tables would mean every table) and advances the
 *       slot to the list's bound.
 *   <li><b>Memory.</b> pgjdbc reads each CopyData message whole: one wal2json row, however large,
 *       is one array in the heap while it is decoded and queued. Values are not copied out of it
 *       (docs/design.md C6), and the pipeline's queues are bounded in bytes, but the largest
 *       single change must fit the heap (docs/operations.md).
 * </ul>
 */
public final class SlotStreamer extends SlotReader {
    private static final Logger log = LoggerFactory.getLogger(SlotStreamer.class);
    /** How often an idle, caught-up stream counts as a successful read round (cdc_active). */
    private static final long IDLE_TICK_MS = 500;

    /** Changes up to a commit, behind a barrier, waiting for NATS. */
    private record Pending(ChangeSink.Barrier barrier, Lsn commitEnd, int rows, long startedNanos) {}

    public SlotStreamer(
            ReaderSettings settings,
            SlotManager slots,
            ChangeSink sink,
            EnabledTablesSource tables,
            CdcState state,
            CdcMetrics metrics,
            GapListener gapListener) {
        super(settings, slots, sink, tables, state, metrics, gapListener);
    }

    @Override
    void read(Connection c, LeaderGate gate, Lsn confirmed)
            throws SQLException, InterruptedException, FencedException, CdcFailure {
        Wal2JsonDecoder decoder = new Wal2JsonDecoder();
        while (!Thread.currentThread().isInterrupted()) {
            gate.checkFence();
            confirmed = max(confirmed, inspect(c).confirmedFlushLsn());
            Lsn bound = flushLsn(c); // the list read next is valid up to here (C5)
            EnabledTables enabled = tables.read();
            if (enabled.isEmpty()) {
                confirmed = advanceIdle(c, gate, confirmed, bound);
                continue;
            }
            try (Connection replication = openReplication();
                    PGReplicationStream stream = start(replication, enabled, confirmed)) {
                log.info(
                        "streaming slot {} from {} (tables {})",
                        slots.slotName(),
                        confirmed,
                        enabled.addTablesOption());
                confirmed = stream(c, stream, gate, decoder, enabled, bound, confirmed);
            }
        }
    }

    /**
     * No enabled table: nothing to decode, but the slot must not pin WAL. Advances only to
     * {@code upto}, the bound of the (empty) list.
     */
    private Lsn advanceIdle(Connection c, LeaderGate gate, Lsn confirmed, Lsn upto)
            throws SQLException, InterruptedException, FencedException {
        gate.checkFence();
        if (upto.isAfter(confirmed)) {
            confirmed = slots.advance(c, upto);
        }
        metrics.polls.increment();
        metrics.batchRows.record(0);
        state.readSucceeded();
        Thread.sleep(settings.idleBackoff().toMillis());
        return confirmed;
    }

    private Connection openReplication() throws SQLException {
        Properties props = new Properties();
        PGProperty.APPLICATION_NAME.set(props, "aura-cdc-worker");
        PGProperty.TCP_KEEP_ALIVE.set(props, true);
        PGProperty.REPLICATION.set(props, "database");
        PGProperty.PREFER_QUERY_MODE.set(props, "simple");
        PGProperty.ASSUME_MIN_SERVER_VERSION.set(props, "10");
        // A walsender decodes with its session's settings: pinned as the poll source pins its session.
        StringBuilder options = new StringBuilder();
        for (String[] setting : SESSION) {
            options.append(options.isEmpty() ? "" : " ")
                    .append("-c ")
                    .append(setting[0])
                    .append('=')
                    .append(setting[1]);
        }
        PGProperty.OPTIONS.set(props, options.toString());
        return DriverManager.getConnection(settings.replicationUrl(), props);
    }

    private PGReplicationStream start(Connection replication, EnabledTables enabled, Lsn from) throws SQLException {
        ChainedLogicalStreamBuilder builder = replication
                .unwrap(PGConnection.class)
                .getReplicationAPI()
                .replicationStream()
                .logical()
                .withSlotName(slots.slotName())
                .withStartPosition(
                        from == null ? LogSequenceNumber.INVALID_LSN : LogSequenceNumber.valueOf(from.value()))
                .withStatusInterval((int) settings.statusInterval().toMillis(), TimeUnit.MILLISECONDS);
        WAL2JSON_OPTIONS.forEach(builder::withSlotOption);
        builder.withSlotOption("add-tables", enabled.addTablesOption());
        return builder.start();
    }

    /**
     * Reads until the table filter changes (returns the confirmed position, the stream drained)
     * or something fails (throws; nothing past the last confirmation is confirmed).
     */
    private Lsn stream(
            Connection c,
            PGReplicationStream stream,
            LeaderGate gate,
            Wal2JsonDecoder decoder,
            EnabledTables enabled,
            Lsn bound,
            Lsn confirmed)
            throws SQLException, InterruptedException, FencedException, CdcFailure {
        Deque<Pending> pending = new ArrayDeque<>();
        boolean inTransaction = false;
        Lsn lastCommit = null;
        int rows = 0;
        long roundStarted = System.nanoTime();
        long lastInspect = System.currentTimeMillis();
        long lastTick = 0;
        int idleSpins = 0;
        long confirmEveryNanos = settings.confirmEvery().toNanos();
        while (true) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException("leadership ended");
            }
            ByteBuffer msg = stream.readPending();
            if (msg != null) {
                idleSpins = 0;
                Lsn at = new Lsn(stream.getLastReceiveLSN().asLong());
                WalMessage m =
                        handle(decoder, enabled, at, msg.array(), msg.arrayOffset() + msg.position(), msg.remaining());
                rows++;
                if (m instanceof WalMessage.Begin) {
                    inTransaction = true;
                } else if (m instanceof WalMessage.Commit) {
                    inTransaction = false;
                    lastCommit = at;
                }
            }
            boolean idle = msg == null;
            // At once when the stream goes idle, else every confirmEvery: measured, confirming only
            // every 200 ms raised the median commit-to-client latency at 1,000 rows/s from 7 to
            // 41 ms (the walsender paces what it sends on the client's position reports), while a
            // barrier per commit under a backlog would cost a NATS round trip per transaction.
            if (!inTransaction
                    && lastCommit != null
                    && (idle || System.nanoTime() - roundStarted >= confirmEveryNanos)) {
                pending.add(new Pending(sink.mark(), lastCommit, rows, roundStarted));
                lastCommit = null;
                rows = 0;
                roundStarted = System.nanoTime();
            }
            while (!pending.isEmpty() && pending.peek().barrier().processed()) {
                if (pending.peek().commitEnd().isAfter(bound)) {
                    Lsn next = boundIfUnchanged(c, enabled);
                    if (next == null) {
                        return restartAt(pending, confirmed);
                    }
                    bound = next;
                }
                confirmed = confirm(stream, gate, pending.poll());
            }
            if (!idle) {
                continue;
            }
            sink.handOff(); // nothing more to read right now: publish what was read
            long now = System.currentTimeMillis();
            if (pending.isEmpty() && !inTransaction && lastCommit == null && now - lastTick >= IDLE_TICK_MS) {
                // Caught up: nothing read is unconfirmed. The walsender's keepalives carry the
                // position it has decoded and sent everything up to, so confirming it skips only
                // WAL without changes for us (keeps the slot from pinning WAL in a quiet database).
                Lsn received = new Lsn(stream.getLastReceiveLSN().asLong());
                if (received.isAfter(bound)) {
                    Lsn next = boundIfUnchanged(c, enabled);
                    if (next == null) {
                        return restartAt(pending, confirmed);
                    }
                    bound = next;
                }
                if (received.isAfter(confirmed)) {
                    gate.checkFence();
                    LogSequenceNumber lsn = LogSequenceNumber.valueOf(received.value());
                    stream.setFlushedLSN(lsn);
                    stream.setAppliedLSN(lsn);
                    confirmed = received;
                }
                metrics.polls.increment();
                metrics.batchRows.record(0);
                state.readSucceeded();
                lastTick = now;
            }
            if (now - lastInspect >= INSPECT_EVERY_MS) {
                inspect(c);
                lastInspect = now;
            }
            // Idle: poll the socket every millisecond at first, then every 5 ms. Measured (issue 25):
            // blocking on the socket instead (a timed peek at the next message, woken by each
            // message) made commit-to-client latency worse on the 2-core bench machine: p50 at
            // 1,000 rows/s 3-10x worse under load, p99 139 ms against 28 ms when quiet.
            Thread.sleep(++idleSpins < 50 ? 1 : 5);
        }
    }

    /**
     * Re-reads (flush position, then list): the new bound when the list is still {@code enabled},
     * else null (what was decoded past the old bound may lack a newly enabled table or partition).
     */
    private Lsn boundIfUnchanged(Connection c, EnabledTables enabled) throws SQLException {
        Lsn next = flushLsn(c);
        return tables.read().equals(enabled) ? next : null;
    }

    /**
     * The list changed: waits until NATS took what was read (nothing past the old bound is
     * confirmed: it is decoded again with the new list, at least once) and returns the position
     * to restart from.
     */
    private Lsn restartAt(Deque<Pending> pending, Lsn confirmed) throws InterruptedException, CdcFailure {
        for (Pending p : pending) {
            p.barrier().await();
        }
        log.info("realtime tables changed: restarting the stream of slot {} at {}", slots.slotName(), confirmed);
        return confirmed;
    }

    /** Waits for NATS's confirmation of a barrier's changes, then tells Postgres. */
    private Lsn confirm(PGReplicationStream stream, LeaderGate gate, Pending p)
            throws InterruptedException, CdcFailure, FencedException, SQLException {
        p.barrier().await();
        gate.checkFence();
        LogSequenceNumber lsn = LogSequenceNumber.valueOf(p.commitEnd().value());
        stream.setFlushedLSN(lsn);
        stream.setAppliedLSN(lsn);
        stream.forceUpdateStatus();
        metrics.polls.increment();
        metrics.batchRows.record(p.rows());
        metrics.pollDuration.record(System.nanoTime() - p.startedNanos(), TimeUnit.NANOSECONDS);
        state.readSucceeded();
        return p.commitEnd();
    }
}
