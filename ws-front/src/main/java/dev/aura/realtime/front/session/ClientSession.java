package dev.aura.realtime.front.session;

import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.fanout.Recipient;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import io.netty.buffer.ByteBufHolder;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One client connection (a WebSocket, or an SSE stream of one channel): its framing, the claims
 * of its {@code apikey}, the channels it joined and its per-second rate windows.
 *
 * <p>Threading: {@link #deliver} and {@link #send} may be called from any thread (Netty queues
 * foreign writes onto the event loop in order). Everything else, including the membership
 * maps, is confined to the connection's event loop.
 *
 * <p>Backpressure: a frame is refused and the connection closed (counted once as a dropped
 * slow client) when more than {@code maxOutboundBytes} are already queued; the softer
 * unwritable-for-too-long rule lives in the transport's slow-client guard.
 */
public final class ClientSession implements Recipient {
    private final Channel channel;
    private final Framing framing;
    private final Claims apiKeyClaims;
    private final long maxOutboundBytes;
    private final FrontMetrics metrics;
    private final AtomicBoolean droppedSlow = new AtomicBoolean();
    private Consumer<String> disconnector = message -> {};

    final Map<String, Membership> memberships = new HashMap<>();
    final Map<String, Object> pendingJoins = new HashMap<>();
    final RateWindow joins;
    final RateWindow events;
    final RateWindow presenceEvents;

    ClientSession(Channel channel, Framing framing, Claims apiKeyClaims, Limits limits, FrontMetrics metrics) {
        this.channel = channel;
        this.framing = framing;
        this.apiKeyClaims = apiKeyClaims;
        this.maxOutboundBytes = limits.maxOutboundBytes();
        this.metrics = metrics;
        this.joins = new RateWindow(limits.maxJoinsPerSecond());
        this.events = new RateWindow(limits.maxEventsPerSecond());
        this.presenceEvents = new RateWindow(limits.maxPresenceEventsPerSecond());
    }

    Channel channel() {
        return channel;
    }

    @Override
    public Framing framing() {
        return framing;
    }

    Claims apiKeyClaims() {
        return apiKeyClaims;
    }

    /** Writes a pre-encoded frame (ownership passes to this call). Any thread. */
    @Override
    public void deliver(ByteBufHolder frame) {
        if (!admit()) {
            frame.release();
            return;
        }
        channel.writeAndFlush(frame, channel.voidPromise());
        metrics.messagesOut(1);
    }

    /**
     * Queues a pre-encoded frame without flushing (ownership passes to this call); the caller
     * flushes with {@link #flushNow()}. Event loop of this session only: used by the fan-out,
     * which writes one message to many sockets in one task per event loop.
     *
     * @return whether the frame was queued
     */
    @Override
    public boolean writeNoFlush(ByteBufHolder frame) {
        if (!admit()) {
            frame.release();
            return false;
        }
        channel.write(frame, channel.voidPromise());
        metrics.messagesOut(1);
        return true;
    }

    /** Flushes what {@link #writeNoFlush} queued. Event loop of this session only. */
    @Override
    public void flushNow() {
        channel.flush();
    }

    @Override
    public EventLoop eventLoop() {
        return channel.eventLoop();
    }

    /** Encodes and writes a reply or push. Any thread. */
    public void send(PhoenixMessage.Outbound message) {
        if (!admit()) {
            return;
        }
        channel.writeAndFlush(message, channel.voidPromise());
        metrics.messagesOut(1);
    }

    private boolean admit() {
        if (!channel.isActive()) {
            return false;
        }
        if (channel.bytesBeforeWritable() > maxOutboundBytes) {
            dropSlowClient();
            return false;
        }
        return true;
    }

    /** Closes the connection as a slow client, counting it once. Any thread. */
    public void dropSlowClient() {
        if (droppedSlow.compareAndSet(false, true)) {
            metrics.slowClientDropped();
            channel.close();
        }
    }

    void onDisconnect(Consumer<String> action) {
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
