package dev.aura.realtime.cdc.failure;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.core.exc.StreamConstraintsException;
import java.io.CharConversionException;
import java.sql.SQLException;

/**
 * The one place that tells a change's own fault from an infrastructure failure (docs/design.md
 * C13). Infrastructure (retry the batch, the slot stays): Postgres or NATS unreachable or
 * refusing our own logins ({@link CdcFailure} with a retriable reason, connection-class and
 * authorisation SQLStates), the leadership fenced, the thread interrupted, the JVM out of memory.
 * Everything else met while one change is decoded, rendered, matched, checked or published is
 * that change's {@link RowFault}: a limit of Jackson or of NATS, an encoding, a bug of ours.
 * (A fenced leadership term is the caller's to catch first: its type lives in a higher layer.)
 */
public final class Faults {
    private Faults() {}

    /**
     * @return the change's fault, or null when {@code t} is an infrastructure failure that must
     *     make the batch be read again
     */
    public static RowFault rowFault(Throwable t) {
        if (t instanceof RowFaultException r) {
            return r.fault();
        }
        if (t instanceof CdcFailure
                || t instanceof InterruptedException
                || t instanceof VirtualMachineError && !(t instanceof StackOverflowError)) {
            return null;
        }
        if (t instanceof SQLException e) {
            return infrastructure(e) ? null : RowFault.INTERNAL;
        }
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StreamConstraintsException || c instanceof StackOverflowError) {
                return RowFault.TOO_LARGE;
            }
            if (c instanceof JacksonException || c instanceof CharConversionException) {
                return RowFault.UNPROCESSABLE;
            }
            if (c instanceof IllegalArgumentException && isNatsLimit(c.getMessage())) {
                return RowFault.TOO_LARGE;
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return RowFault.INTERNAL;
    }

    /**
     * A Postgres failure that says nothing about the statement's input: the server unreachable,
     * the session broken, our login refused or lacking a privilege, the server out of resources.
     */
    public static boolean infrastructure(SQLException e) {
        String state = e.getSQLState() == null ? "" : e.getSQLState();
        return CdcFailure.isConnectionFailure(e)
                || state.startsWith("28")
                || state.equals("42501")
                || state.startsWith("53")
                || state.startsWith("57")
                || state.startsWith("58");
    }

    /** jnats' refusals of a subject or body (its texts; a control line or payload over the server's limit). */
    private static boolean isNatsLimit(String message) {
        return message != null
                && (message.contains("Control line is too long")
                        || message.contains("max payload")
                        || message.contains("Max Payload")
                        || message.contains("exceeds"));
    }

    /**
     * Our own words for a throwable: its class and those of its causes, and where it was thrown,
     * never a message (which may quote a tenant's data).
     */
    public static String describe(Throwable t) {
        if (t instanceof RowFaultException r) {
            return r.getMessage();
        }
        StringBuilder s = new StringBuilder(t.getClass().getName());
        int depth = 0;
        for (Throwable c = t.getCause(); c != null && c != t && depth < 4; c = c.getCause(), depth++) {
            s.append(" < ").append(c.getClass().getName());
        }
        StackTraceElement[] at = t.getStackTrace();
        if (at.length > 0) {
            s.append(" at ").append(at[0].getClassName()).append('.').append(at[0].getMethodName());
        }
        return s.toString();
    }
}
