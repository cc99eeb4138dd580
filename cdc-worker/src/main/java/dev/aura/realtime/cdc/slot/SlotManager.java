package dev.aura.realtime.cdc.slot;

import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.health.SlotInfo;
import dev.aura.realtime.common.lsn.Lsn;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Prerequisite checks and the lifecycle of the wal2json slot (docs/design.md C2, C3), on the
 * caller's replication connection (autocommit). Not thread-safe; used by the poll loop only.
 */
public final class SlotManager {
    private static final Logger log = LoggerFactory.getLogger(SlotManager.class);
    public static final String PLUGIN = "wal2json";

    private final String slotName;

    public SlotManager(String slotName) {
        this.slotName = slotName;
    }

    public String slotName() {
        return slotName;
    }

    /**
     * Checks the role's REPLICATION attribute and {@code wal_level}; warns when
     * {@code max_slot_wal_keep_size} is -1 (a stalled slot could then fill the disk).
     *
     * @throws CdcFailure naming the missing prerequisite
     */
    public void checkPrerequisites(Connection c) throws CdcFailure, SQLException {
        try (Statement s = c.createStatement()) {
            // Read everything first, so the -1 warning is logged even when another prerequisite fails.
            boolean privileged;
            try (ResultSet rs =
                    s.executeQuery("SELECT rolsuper OR rolreplication FROM pg_roles WHERE rolname = current_user")) {
                privileged = !rs.next() || rs.getBoolean(1);
            }
            String walLevel = show(s, "wal_level");
            String keep = show(s, "max_slot_wal_keep_size");
            if ("-1".equals(keep)) {
                log.warn(
                        "[WalKeepUnlimited] max_slot_wal_keep_size = -1: a stalled slot retains WAL without limit and can fill the "
                                + "Postgres disk. Set max_slot_wal_keep_size (e.g. 10GB); the worker recreates a lost slot.");
            }
            if (!privileged) {
                throw new CdcFailure(
                        CdcReason.NO_REPLICATION_PRIVILEGE,
                        "role of POSTGRES_REPLICATION_URL has neither REPLICATION nor SUPERUSER: ALTER ROLE ... REPLICATION",
                        false,
                        null);
            }
            if (!"logical".equals(walLevel)) {
                throw new CdcFailure(
                        CdcReason.WAL_LEVEL_NOT_LOGICAL,
                        "wal_level is '" + walLevel + "': set wal_level = logical and restart Postgres",
                        false,
                        null);
            }
        }
    }

    private static String show(Statement s, String setting) throws SQLException {
        try (ResultSet rs = s.executeQuery("SHOW " + setting)) {
            rs.next();
            return rs.getString(1);
        }
    }

    /** Reads the slot's row; empty when the slot does not exist. */
    public Optional<SlotInfo> inspect(Connection c) throws SQLException {
        String sql = """
                SELECT s.slot_name::text, s.plugin::text, s.wal_status, s.safe_wal_size,
                       s.restart_lsn::text, s.confirmed_flush_lsn::text, s.active_pid,
                       pg_current_wal_flush_lsn()::text
                  FROM pg_replication_slots s WHERE s.slot_name = ?""";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, slotName);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return Optional.empty();
                }
                long safe = rs.getLong(4);
                Long safeWal = rs.wasNull() ? null : safe;
                int pid = rs.getInt(7);
                Integer activePid = rs.wasNull() ? null : pid;
                return Optional.of(new SlotInfo(
                        rs.getString(1),
                        rs.getString(2),
                        rs.getString(3),
                        safeWal,
                        lsnOrNull(rs.getString(5)),
                        lsnOrNull(rs.getString(6)),
                        activePid,
                        Lsn.parse(rs.getString(8))));
            }
        }
    }

    /**
     * Creates the slot with wal2json when absent.
     *
     * @return the slot's state after the call
     * @throws CdcFailure when it exists with another plugin, or creation fails (wal2json missing / not allowed)
     */
    public SlotInfo ensure(Connection c) throws CdcFailure, SQLException {
        Optional<SlotInfo> existing = inspect(c);
        if (existing.isPresent()) {
            SlotInfo info = existing.get();
            if (!PLUGIN.equals(info.plugin())) {
                throw new CdcFailure(
                        CdcReason.SLOT_WRONG_PLUGIN,
                        "slot " + slotName + " uses plugin " + info.plugin()
                                + ", not wal2json: drop it or set CDC_SLOT_NAME",
                        false,
                        null);
            }
            return info;
        }
        create(c);
        return inspect(c).orElseThrow(() -> new SQLException("slot " + slotName + " vanished right after creation"));
    }

    private void create(Connection c) throws CdcFailure, SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT lsn::text FROM pg_create_logical_replication_slot(?, ?)")) {
            ps.setString(1, slotName);
            ps.setString(2, PLUGIN);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                log.info("created logical replication slot {} (plugin wal2json) at {}", slotName, rs.getString(1));
            }
        } catch (SQLException e) {
            if ("42710".equals(e.getSQLState())) {
                return; // duplicate_object: created concurrently by another process
            }
            throw CdcFailure.classify(e);
        }
    }

    /**
     * Drops and recreates a lost slot. Changes between the old confirmed_flush_lsn and the new
     * slot's start are gone for good; the caller logs and reports the range.
     *
     * @return the new slot
     */
    public SlotInfo recreate(Connection c) throws CdcFailure, SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT pg_drop_replication_slot(?)")) {
            ps.setString(1, slotName);
            ps.execute();
        } catch (SQLException e) {
            if (!"42704".equals(e.getSQLState())) { // undefined_object: already gone
                throw CdcFailure.classify(e);
            }
        }
        create(c);
        return inspect(c).orElseThrow(() -> new SQLException("slot " + slotName + " vanished right after re-creation"));
    }

    /**
     * {@code pg_replication_slot_advance(slot, target)}. Only call with the end LSN of a commit
     * row, or with an upto_lsn that a non-full peek proved fully decoded (docs/design.md C4):
     * advancing into the middle of a transaction would re-deliver it or skip it.
     *
     * @return the slot's new confirmed_flush_lsn
     */
    public Lsn advance(Connection c, Lsn target) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT end_lsn::text FROM pg_replication_slot_advance(?, ?::pg_lsn)")) {
            ps.setString(1, slotName);
            ps.setString(2, target.toString());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return Lsn.parse(rs.getString(1));
            }
        }
    }

    private static Lsn lsnOrNull(String text) {
        return text == null ? null : Lsn.parse(text);
    }
}
