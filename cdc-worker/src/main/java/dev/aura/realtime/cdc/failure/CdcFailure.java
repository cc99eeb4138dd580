package dev.aura.realtime.cdc.failure;

import java.sql.SQLException;

/**
 * The cdc-worker's one failure type: a {@link CdcReason} (the closed list of {@code /health}
 * reason codes), a detail for humans, and whether retrying can help (permanent failures are
 * retried too, but slowly, and logged at ERROR).
 *
 * <p>Thrown wherever the CDC loop must stop a batch without advancing the slot: prerequisites
 * and slot lifecycle ({@code slot}), a publish NATS did not take or confirm ({@code publish}),
 * an RLS check that could not reach Postgres ({@code rls}), a registry still re-synchronising, a
 * fenced term or a shard bug ({@code pipeline}). The poll loop reports it and re-reads the batch.
 */
public final class CdcFailure extends Exception {
    private final CdcReason reason;
    private final boolean retriable;

    public CdcFailure(CdcReason reason, String detail, boolean retriable, Throwable cause) {
        super(detail, cause);
        this.reason = reason;
        this.retriable = retriable;
    }

    /** A failure that retrying (re-reading the batch) can cure. */
    public static CdcFailure retriable(CdcReason reason, String detail, Throwable cause) {
        return new CdcFailure(reason, detail, true, cause);
    }

    public CdcReason reason() {
        return reason;
    }

    public boolean retriable() {
        return retriable;
    }

    /**
     * Classifies a Postgres error by SQLState and the server's message text (the messages are
     * Postgres's own: slot.c, logical.c, dfmgr.c; they are stable across 13–17).
     */
    public static CdcFailure classify(SQLException e) {
        String msg = String.valueOf(e.getMessage());
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        if (msg.contains("could not access file \"wal2json\"")) {
            return new CdcFailure(
                    CdcReason.WAL2JSON_MISSING, "wal2json is not installed on the Postgres server: " + msg, false, e);
        }
        if (msg.contains("may not be used as an output plugin")) {
            return new CdcFailure(
                    CdcReason.WAL2JSON_NOT_ALLOWED,
                    "wal2json is not listed in output_plugin_libraries: " + msg,
                    false,
                    e);
        }
        if (msg.contains("can no longer get changes from replication slot") || msg.contains("has been invalidated")) {
            return new CdcFailure(CdcReason.SLOT_LOST, msg, true, e);
        }
        if (msg.contains("is active for PID")) {
            return new CdcFailure(CdcReason.SLOT_ACTIVE_ELSEWHERE, msg, true, e);
        }
        if (msg.contains("wal_level")) {
            return new CdcFailure(CdcReason.WAL_LEVEL_NOT_LOGICAL, msg, false, e);
        }
        if (msg.contains("must be superuser or replication role")
                || msg.contains("permission denied to use replication slots")) {
            return new CdcFailure(CdcReason.NO_REPLICATION_PRIVILEGE, msg, false, e);
        }
        if (state.startsWith("28")) {
            return new CdcFailure(CdcReason.POSTGRES_AUTH, msg, false, e);
        }
        if (isConnectionFailure(e)) {
            return new CdcFailure(CdcReason.POSTGRES_UNAVAILABLE, msg, true, e);
        }
        return new CdcFailure(CdcReason.ERROR, msg, true, e);
    }

    /**
     * Postgres itself was unreachable or the session broke (SQLState class 08, 57P, or too many
     * connections): unlike an error of one statement, this says nothing about the statement.
     */
    public static boolean isConnectionFailure(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        return state.startsWith("08") || state.startsWith("57P") || state.equals("53300");
    }
}
