package dev.aura.realtime.cdc.rls;

import dev.aura.realtime.cdc.slot.CdcFailure;
import dev.aura.realtime.cdc.slot.CdcReason;
import java.sql.SQLException;

/**
 * Postgres itself was unreachable during an RLS check (connection refused, terminated session):
 * unlike a check that fails for one claim set (denied, fail closed), this says nothing about any
 * subscriber, so the batch fails and is re-read from the slot instead of being dropped.
 */
public final class RlsUnavailableException extends RuntimeException {
    RlsUnavailableException(String message, SQLException cause) {
        super(message + ": " + cause.getMessage(), cause);
    }

    /** Rethrows {@code e} as this exception when it is a connection failure; returns otherwise. */
    static void rethrowIfUnavailable(String what, SQLException e) {
        if (CdcFailure.classify(e).reason() == CdcReason.POSTGRES_UNAVAILABLE) {
            throw new RlsUnavailableException(what, e);
        }
    }
}
