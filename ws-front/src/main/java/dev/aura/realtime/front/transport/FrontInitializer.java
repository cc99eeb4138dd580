package dev.aura.realtime.front.transport;

import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.channel.ChannelRouter;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.PhoenixCodec;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.session.WireHead;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import io.netty.handler.timeout.IdleStateHandler;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The pipelines of the one port, and nothing else. Every accepted socket starts as HTTP:
 *
 * <pre>
 * wire → fair-reads ({@link FairReads}) → http (codec) → http-deadlines ({@link HttpDeadlines})
 *      → http-aggregator → router ({@link HttpRouter})
 * </pre>
 *
 * The router answers plain requests itself; an accepted WebSocket upgrade or SSE request
 * replaces it with one of:
 *
 * <pre>
 * WebSocket: wire → fair-reads → ws encoder/decoder (the handshake's, in place of http) → ws-aggregator
 *            ({@link WebSocketMessageBounds}) → ws-idle
 *            → ws-control → ws-slow → phoenix-codec → session
 * SSE:       wire → fair-reads → http → sse-encoder → sse-slow → session
 * </pre>
 *
 * A WebSocket whose apikey was refused gets {@code ws-aggregator → ws-control → phoenix-codec →
 * refused} ({@link RefusedSocket}) instead, so that the client reads why.
 *
 * Both drop {@code http-deadlines}: a WebSocket has its idle timeout, an SSE stream its
 * heartbeats and no read timeout at all.
 * {@code wire} ({@link WireHead}) stays first: the fan-out's shared frames, already complete
 * WebSocket frames or HTTP chunks, are written from it straight to the socket.
 *
 * Sharable: holds only immutable settings; handlers with state are created per socket.
 */
final class FrontInitializer extends ChannelInitializer<Channel> {
    /**
     * Largest HTTP request body: a REST broadcast batch (docs/design.md H3). Larger requests get
     * {@code 413 {"error": ...}} and the connection is closed.
     */
    static final int MAX_HTTP_REQUEST_BYTES = 1024 * 1024;
    /** A connection must send its first request head within this (slowloris; browsers send it at once). */
    static final Duration FIRST_REQUEST_DEADLINE = Duration.ofSeconds(5);

    private final TransportContext context;
    private final AtomicBoolean draining;
    private final ConnectRefusals refusals;

    /** @param draining set once the server stops accepting; new upgrades are then refused */
    FrontInitializer(TransportContext context, AtomicBoolean draining) {
        this.context = context;
        this.draining = draining;
        this.refusals = new ConnectRefusals(context.metrics(), System::nanoTime);
    }

    /** Counts and logs connections refused at connect (shared by the WebSocket and SSE endpoints). */
    ConnectRefusals refusals() {
        return refusals;
    }

    @Override
    protected void initChannel(Channel ch) {
        ch.pipeline()
                .addLast(WireHead.NAME, WireHead.INSTANCE)
                .addLast(FairReads.NAME, new FairReads())
                .addLast("http", new HttpServerCodec())
                .addLast(
                        HttpDeadlines.NAME,
                        new HttpDeadlines(FIRST_REQUEST_DEADLINE, context.bounds(), context.metrics()))
                .addLast("http-aggregator", new JsonHttpAggregator(MAX_HTTP_REQUEST_BYTES))
                .addLast("router", new HttpRouter(context, draining, this));
    }

    /** Replaces the handler named {@code router} with the WebSocket handlers (before the handshake). */
    void webSocket(ChannelPipeline p, String router, WebSocketServerHandshaker handshaker, Vsn vsn, Claims claims) {
        p.remove(HttpDeadlines.NAME);
        p.addAfter(
                router,
                "ws-aggregator",
                new WebSocketMessageBounds(
                        context.maxFrameBytes(), context.bounds().fragment(), context.metrics()));
        p.addAfter(
                "ws-aggregator",
                "ws-idle",
                new IdleStateHandler(context.idleTimeout().toMillis(), 0, 0, TimeUnit.MILLISECONDS));
        p.addAfter("ws-idle", "ws-control", new WebSocketControlHandler(handshaker));
        p.addAfter("ws-control", "ws-slow", new SlowClientGuard(context.slowClientTimeout()));
        p.addAfter(
                "ws-slow",
                "phoenix-codec",
                new PhoenixCodec(vsn, context.json(), context.binary(), context.metrics()::malformed));
        p.addAfter("phoenix-codec", "session", new ChannelRouter(context.channels(), Framing.of(vsn), claims));
        p.remove(router);
    }

    /**
     * Replaces the handler named {@code router} with the handlers of a refused WebSocket
     * ({@link RefusedSocket}, before the handshake): it answers joins with {@code reason} and closes.
     */
    void refusedWebSocket(
            ChannelPipeline p, String router, WebSocketServerHandshaker handshaker, Vsn vsn, String reason) {
        p.remove(HttpDeadlines.NAME);
        p.addAfter(
                router,
                "ws-aggregator",
                new WebSocketMessageBounds(
                        context.maxFrameBytes(), context.bounds().fragment(), context.metrics()));
        p.addAfter("ws-aggregator", "ws-control", new WebSocketControlHandler(handshaker));
        p.addAfter(
                "ws-control",
                "phoenix-codec",
                new PhoenixCodec(vsn, context.json(), context.binary(), context.metrics()::malformed));
        p.addAfter("phoenix-codec", "refused", new RefusedSocket(handshaker, reason));
        p.remove(router);
    }

    /**
     * Replaces the handler named {@code router} with the SSE handlers of one channel (after the
     * response head was written).
     *
     * @return the name of the handler to fire the channel's join from
     */
    String sse(ChannelPipeline p, String router, Claims claims, String channel) {
        p.remove(HttpDeadlines.NAME);
        p.addAfter(
                router,
                "sse-encoder",
                new SseEncoder(
                        context.json().mapper(),
                        channel,
                        SseEndpoint.JOIN_REF,
                        context.sseHeartbeat().toMillis()));
        p.addAfter("sse-encoder", "sse-slow", new SlowClientGuard(context.slowClientTimeout()));
        p.addAfter("sse-slow", "session", new ChannelRouter(context.channels(), Framing.SSE, claims));
        p.remove(router);
        return "sse-encoder";
    }
}
