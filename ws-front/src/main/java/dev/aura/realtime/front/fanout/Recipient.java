package dev.aura.realtime.front.fanout;

import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.OutFrame;
import io.netty.channel.EventLoop;

/**
 * One client connection as the fan-out writes to it: shared frames built for its
 * {@link #framing()} go onto the socket as they are, and the connection's {@link LoopOutbox}
 * flushes once per event-loop turn. A connection that cannot keep up is closed, never waited for
 * (docs/protocol.md section 5, "Slow clients and overload").
 */
public interface Recipient {
    /** How this connection's frames are encoded. */
    Framing framing();

    /** The connection's event loop. */
    EventLoop eventLoop();

    /**
     * Queues a view of {@code frame}'s bytes on the socket without flushing; the connection's
     * outbox flushes at the end of the loop's turn. Event loop of this connection only. Does not
     * take ownership of {@code frame}.
     *
     * @return false when refused: the connection is closed or closing, or it was just closed for
     *     having too much queued already
     */
    boolean writeShared(OutFrame frame);

    /** {@link #writeShared} from any thread (through the connection's outbox when off its loop). */
    void deliver(OutFrame frame);

    /**
     * Closes the connection because a message for it could not be delivered in time or queued
     * within bounds (overload): nothing more is written to it, so what it received is a gap-free
     * prefix and the close tells the client the rest. Counted once. Any thread.
     *
     * @return true when this call closed it (false: already closed or closing)
     */
    boolean shed();
}
