package dev.aura.realtime.front.fanout;

import dev.aura.realtime.front.protocol.Framing;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.EventLoop;

/**
 * One client connection as the fan-out writes to it. Frames are pre-encoded for
 * {@link #framing()} ({@code OutFrame.retainedFrame()}); every write takes ownership of its frame
 * and releases it when refused (connection closed, or too much already queued).
 */
public interface Recipient {
    /** How this connection's frames are encoded. */
    Framing framing();

    /** The connection's event loop. */
    EventLoop eventLoop();

    /** Writes and flushes one frame. Any thread. */
    void deliver(ByteBufHolder frame);

    /**
     * Queues one frame without flushing; the caller flushes with {@link #flushNow()}. Event loop
     * of this connection only.
     *
     * @return whether the frame was queued
     */
    boolean writeNoFlush(ByteBufHolder frame);

    /** Flushes what {@link #writeNoFlush} queued. Event loop of this connection only. */
    void flushNow();
}
