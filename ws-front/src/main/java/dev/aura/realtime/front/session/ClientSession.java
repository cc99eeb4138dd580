package dev.aura.realtime.front.session;

import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.fanout.LoopOutbox;
import dev.aura.realtime.front.fanout.Recipient;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.OutFrame;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoop;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One client connection (a WebSocket, or an SSE stream of one channel): its framing, the claims
 * of its {@code apikey}, its write path and its per-second rate windows. Its channels are the
 * channel layer's.
 *
 * <p>Threading: {@link #deliver}, {@link #send}, {@link #shed} and {@link #dropSlowClient} may be
 * called from any thread; writes from other threads go through the event loop's
 * {@link LoopOutbox}, which keeps each thread's order and flushes once per turn. Everything else,
 * including the rate windows, is confined to the connection's event loop.
 *
 * <p>Write path: shared frames are written from the pipeline's {@link WireHead} (they are complete
 * frames), replies and pushes from the tail (the Phoenix codec encodes them); either way the
 * connection is flushed by its loop's outbox at the end of the turn, not per write.
 *
 * <p>Backpressure: a write is refused and the connection closed (counted once as a dropped slow
 * client) when more than {@code maxOutboundBytes} are already queued; the softer
 * unwritable-for-too-long rule lives in the transport's slow-client guard, and the loop's own
 * queue sheds by {@link #shed} (docs/protocol.md section 5).
 */
public final class ClientSession implements Recipient, LoopOutbox.Flushable {
    /**
     * Writes after which a connection is flushed at once instead of at the end of the turn: one
     * read can carry thousands of client frames (a pipelining client), and their replies must not
     * all wait for the whole read to be handled. A {@code writev} takes at most 1,024 buffers anyway.
     */
    static final int FLUSH_AFTER_WRITES = 128;

    private final Channel channel;
    private final Framing framing;
    private final Claims apiKeyClaims;
    private final long maxOutboundBytes;
    private final FrontMetrics metrics;
    private final LoopOutbox outbox;
    private final ChannelHandlerContext wire;
    /** Set once by the first of: slow-client drop, overload shed. Nothing is written after it. */
    private final AtomicBoolean closing = new AtomicBoolean();
    /** Loop only: listed in the outbox for a flush at the end of the turn. */
    private boolean unflushed;
    /** Loop only: writes since the last flush. */
    private int writesSinceFlush;
    /** Loop only: the stream's end was written (SSE end, WebSocket close frame); nothing may follow. */
    private boolean outputEnded;

    private Consumer<String> disconnector = message -> {};

    private final RateWindow joins;
    private final RateWindow events;
    private final RateWindow presenceEvents;

    /**
     * @param outbox the write path of the channel's event loop
     * @throws IllegalStateException when the pipeline has no {@link WireHead}
     */
    public ClientSession(
            Channel channel,
            Framing framing,
            Claims apiKeyClaims,
            Limits limits,
            FrontMetrics metrics,
            LoopOutbox outbox) {
        this.channel = channel;
        this.framing = framing;
        this.apiKeyClaims = apiKeyClaims;
        this.maxOutboundBytes = limits.maxOutboundBytes();
        this.metrics = metrics;
        this.outbox = outbox;
        this.wire = channel.pipeline().context(WireHead.NAME);
        if (wire == null) {
            throw new IllegalStateException("pipeline of " + channel + " has no " + WireHead.NAME + " handler");
        }
        this.joins = new RateWindow(limits.maxJoinsPerSecond());
        this.events = new RateWindow(limits.maxEventsPerSecond());
        this.presenceEvents = new RateWindow(limits.maxPresenceEventsPerSecond());
    }

    /** The connection's Netty channel. */
    public Channel channel() {
        return channel;
    }

    @Override
    public Framing framing() {
        return framing;
    }

    /** The verified claims of the connection's {@code apikey}. */
    public Claims apiKeyClaims() {
        return apiKeyClaims;
    }

    /** Counts one join at {@code nowMs}; false when the connection's joins per second are spent. Event loop only. */
    public boolean tryJoin(long nowMs) {
        return joins.tryAcquire(nowMs);
    }

    /** Counts one client event (broadcast, presence); false when the connection's events per second are spent. */
    public boolean tryEvent(long nowMs) {
        return events.tryAcquire(nowMs);
    }

    /** Counts one presence push; false when the connection's presence events per second are spent. */
    public boolean tryPresenceEvent(long nowMs) {
        return presenceEvents.tryAcquire(nowMs);
    }

    @Override
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    /** Writes a view of a shared frame; flushed at the end of the loop's turn. Event loop only. */
    @Override
    public boolean writeShared(OutFrame frame) {
        if (!admit()) {
            return false;
        }
        wire.write(frame.retainedWire(), channel.voidPromise());
        written();
        return true;
    }

    /** Writes a shared frame (the caller keeps its reference). Any thread. */
    @Override
    public void deliver(OutFrame frame) {
        if (channel.eventLoop().inEventLoop()) {
            if (writeShared(frame)) {
                metrics.messagesOut(1);
            }
        } else {
            outbox.submitWrite(this, frame);
        }
    }

    /** Encodes and writes a reply or push. Any thread. */
    public void send(PhoenixMessage.Outbound message) {
        if (channel.eventLoop().inEventLoop()) {
            write(message);
        } else {
            outbox.submitTask(this, () -> write(message));
        }
    }

    private void write(PhoenixMessage.Outbound message) {
        if (!admit()) {
            return;
        }
        channel.write(message, channel.voidPromise());
        metrics.messagesOut(1);
        written();
    }

    private void written() {
        if (++writesSinceFlush >= FLUSH_AFTER_WRITES) {
            flush();
        } else {
            outbox.flushLater(this);
        }
    }

    private boolean admit() {
        if (closing.get() || outputEnded || !channel.isActive()) {
            return false;
        }
        if (channel.bytesBeforeWritable() > maxOutboundBytes) {
            dropSlowClient();
            return false;
        }
        return true;
    }

    /**
     * A future completed once everything written before it reached the socket (an empty write
     * from the {@link WireHead}: Netty completes write promises in order, after their bytes were
     * handed to the kernel). Fails when the connection closed first. Event loop only.
     */
    public io.netty.channel.ChannelFuture writeBarrier() {
        io.netty.channel.ChannelPromise done = channel.newPromise();
        wire.write(io.netty.buffer.Unpooled.EMPTY_BUFFER, done);
        outbox.flushLater(this);
        return done;
    }

    @Override
    public boolean markUnflushed() {
        if (unflushed) {
            return false;
        }
        unflushed = true;
        return true;
    }

    @Override
    public void flush() {
        unflushed = false;
        writesSinceFlush = 0;
        wire.flush();
    }

    /**
     * The stream ended on the wire (the SSE response's last chunk, or a WebSocket close frame):
     * nothing more is written. Event loop only.
     */
    public void endOutput() {
        outputEnded = true;
    }

    /** Closes the connection as a slow client, counting it once. Any thread. */
    public void dropSlowClient() {
        if (closing.compareAndSet(false, true)) {
            metrics.slowClientDropped();
            channel.close();
        }
    }

    @Override
    public boolean shed() {
        if (closing.compareAndSet(false, true)) {
            metrics.overloadShed();
            channel.close();
            return true;
        }
        return false;
    }

    /** What {@link #disconnect} runs on the event loop (the channel layer closes the connection's channels). */
    public void onDisconnect(Consumer<String> action) {
        this.disconnector = action;
    }

    /**
     * Server-initiated disconnect (shutdown): every channel gets a {@code system} message with
     * {@code message} and {@code phx_close}, then the socket is closed. Any thread.
     */
    public void disconnect(String message) {
        channel.eventLoop().execute(() -> disconnector.accept(message));
    }

    @Override
    public String toString() {
        return "ClientSession[" + channel.id().asShortText() + ", " + framing.label() + ", project="
                + apiKeyClaims.projectId() + "]";
    }
}
