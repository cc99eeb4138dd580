package dev.aura.realtime.testkit;

import java.sql.SQLException;

/** A {@link SQLException} from a testkit helper, rethrown unchecked so tests stay terse. */
public final class UncheckedSqlException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** Wraps {@code cause}; the message names what was attempted. */
    public UncheckedSqlException(String message, SQLException cause) {
        super(message + ": " + cause.getMessage(), cause);
    }

    /** Returns the SQLSTATE of the wrapped exception (e.g. {@code 55000}), or null. */
    public String sqlState() {
        return ((SQLException) getCause()).getSQLState();
    }
}
