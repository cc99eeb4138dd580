package dev.aura.realtime.cdc.slot;

import java.io.IOException;
import java.lang.reflect.Field;
import java.net.SocketTimeoutException;
import java.sql.Connection;
import java.sql.SQLException;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.PGStream;
import org.postgresql.core.QueryExecutorBase;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The stream source's blocking read (docs/design.md C12): waits until the replication connection
 * has a byte to read, or a timeout passes, without consuming anything, so the reader sleeps in
 * the kernel and wakes the moment the walsender sends, then drains with {@code readPending()}.
 *
 * <p>pgjdbc's own blocking {@code PGReplicationStream.read()} cannot be used on the reader's
 * thread: it returns only with data (keepalives are answered inside it), so an idle stream would
 * never notice an interrupt (leadership lost, shutdown), a barrier NATS completed (the slot's
 * confirmation), or its idle tick; and it holds the connection's lock, so no other thread may
 * send the position meanwhile. A timeout on the socket while {@code read()} blocks ends the copy
 * (pgjdbc unlocks it on any I/O error). This wait uses what pgjdbc's {@code hasMessagePending()}
 * does with a 1 ms timeout, with a longer one: a socket timeout while peeking at the first byte
 * of the next message (nothing read yet, {@code PGStream.peekChar()} with the network timeout
 * set) leaves the connection intact. The stream is reached through pgjdbc's internal field
 * {@code QueryExecutorBase.pgStream}; if that ever fails (another pgjdbc), the reader falls back
 * to sleeping 1 ms between empty reads and logs it once.
 */
final class SocketWait {
    private static final Logger log = LoggerFactory.getLogger(SocketWait.class);

    /** The connection's stream, or null: sleep instead. */
    private final PGStream stream;

    private SocketWait(PGStream stream) {
        this.stream = stream;
    }

    /** The wait for one replication connection (used by one thread, the one reading it). */
    static SocketWait of(Connection replication) {
        try {
            Object executor = replication.unwrap(BaseConnection.class).getQueryExecutor();
            Field f = QueryExecutorBase.class.getDeclaredField("pgStream");
            f.setAccessible(true);
            return new SocketWait((PGStream) f.get(executor));
        } catch (ReflectiveOperationException | SQLException | RuntimeException e) {
            log.warn(
                    "[StreamWaitUnavailable] cannot wait on the replication socket ({}); the stream source polls it every millisecond instead",
                    e.toString());
            return new SocketWait(null);
        }
    }

    /** True when it waits on the socket, false when it sleeps (fallback). */
    boolean blocking() {
        return stream != null;
    }

    /**
     * Waits until a byte of the next message arrived or {@code timeoutMs} passed.
     *
     * @return true when something arrived (read it with {@code readPending()}), false on timeout
     * @throws SQLException when the connection failed or the server closed it
     */
    boolean await(long timeoutMs) throws SQLException, InterruptedException {
        if (stream == null) {
            Thread.sleep(1);
            return false;
        }
        int ms = (int) Math.max(1, Math.min(timeoutMs, Integer.MAX_VALUE));
        try {
            int before = stream.getNetworkTimeout();
            stream.setNetworkTimeout(ms);
            try {
                stream.peekChar(); // blocks until a byte is buffered; EOFException when the server closed
                return true;
            } catch (SocketTimeoutException e) {
                return false;
            } finally {
                stream.setNetworkTimeout(before);
            }
        } catch (IOException e) {
            throw new SQLException("replication connection failed while waiting for data: " + e, "08006", e);
        }
    }
}
