package dev.aura.realtime.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A protocol-level Phoenix/WebSocket load client on Netty: thousands of connections on a few
 * event-loop threads, bound round robin to several loopback addresses ({@link LoopbackSources}).
 * Frames are handed to a {@link Listener} as raw bytes so a listener that only counts never builds
 * a String.
 */
final class WsClients implements AutoCloseable {
    private static final byte[] PHX_REPLY = "\"phx_reply\"".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] STATUS_OK = "\"status\":\"ok\"".getBytes(StandardCharsets.US_ASCII);

    /**
     * Receives every text frame after the connection's join reply, or every frame at all with
     * {@link WsClients#WsClients(int, boolean) allFrames} (called on an event loop).
     */
    interface Listener {
        void onText(Conn conn, ByteBuf text);

        /** The socket closed after its handshake (the server went away, or we closed it). */
        default void onClose(Conn conn) {}
    }

    /** One WebSocket connection. */
    static final class Conn {
        final int index;
        final Listener listener;
        volatile Channel channel;
        final CompletableFuture<Conn> open = new CompletableFuture<>();
        volatile CompletableFuture<Boolean> joined = new CompletableFuture<>();

        Conn(int index, Listener listener) {
            this.index = index;
            this.listener = listener;
        }

        void send(String text) {
            channel.writeAndFlush(new TextWebSocketFrame(Unpooled.copiedBuffer(text, StandardCharsets.UTF_8)));
        }
    }

    private final EventLoopGroup group;
    final AtomicInteger closedUnexpectedly = new AtomicInteger();
    private final boolean allFrames;
    private volatile boolean closing;

    WsClients(int threads) {
        this(threads, false);
    }

    /** @param allFrames hand every frame to the listener, the join replies too ({@link #joinAll} then never completes) */
    WsClients(int threads, boolean allFrames) {
        group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
        this.allFrames = allFrames;
    }

    Conn connect(URI uri, int index, Listener listener) {
        Conn conn = new Conn(index, listener);
        WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                .webSocketUri(uri)
                .version(WebSocketVersion.V13)
                .maxFramePayloadLength(16 * 1024 * 1024)
                .handshakeTimeoutMillis(60_000)
                .dropPongFrames(true)
                .build();
        new Bootstrap()
                .group(group)
                .channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline()
                                .addLast(
                                        new HttpClientCodec(),
                                        new HttpObjectAggregator(65536),
                                        new WebSocketClientProtocolHandler(config),
                                        new FrameHandler(conn));
                    }
                })
                .connect(new InetSocketAddress(uri.getHost(), uri.getPort()), LoopbackSources.of(index))
                .addListener(f -> {
                    if (!f.isSuccess()) {
                        conn.open.completeExceptionally(f.cause());
                    }
                });
        return conn;
    }

    /** Opens {@code n} connections with at most {@code inFlight} handshakes at a time. */
    List<Conn> connectMany(URI uri, int n, int inFlight, Listener listener) throws InterruptedException {
        Semaphore permits = new Semaphore(inFlight);
        List<Conn> conns = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            permits.acquire();
            Conn c = connect(uri, i, listener);
            c.open.whenComplete((ok, err) -> permits.release());
            conns.add(c);
        }
        for (Conn c : conns) {
            c.open.join();
        }
        return conns;
    }

    /** Sends a vsn 1.0.0 phx_join on every connection (bounded in flight) and waits for all ok replies. */
    void joinAll(List<Conn> conns, String topic, String config, int inFlight) throws InterruptedException {
        Semaphore permits = new Semaphore(inFlight);
        CountDownLatch done = new CountDownLatch(conns.size());
        for (Conn c : conns) {
            permits.acquire();
            c.joined.whenComplete((ok, err) -> {
                permits.release();
                done.countDown();
            });
            c.send(join(topic, config));
        }
        if (!done.await(180, TimeUnit.SECONDS)) {
            throw new IllegalStateException("joins did not complete: " + done.getCount() + " missing");
        }
        long failed = conns.stream().filter(c -> !c.joined.join()).count();
        if (failed > 0) {
            throw new IllegalStateException(failed + " joins were refused");
        }
    }

    static String join(String topic, String config) {
        return "{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":" + config
                + "},\"ref\":\"1\",\"join_ref\":\"1\"}";
    }

    static String broadcastConfig() {
        return "{\"broadcast\":{\"self\":false,\"ack\":false},\"presence\":{\"key\":\"\"},\"postgres_changes\":[]}";
    }

    private final class FrameHandler extends SimpleChannelInboundHandler<WebSocketFrame> {
        private final Conn conn;

        FrameHandler(Conn conn) {
            this.conn = conn;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                conn.channel = ctx.channel();
                conn.open.complete(conn);
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
            if (!(frame instanceof TextWebSocketFrame)) {
                return;
            }
            ByteBuf text = frame.content();
            if (allFrames) {
                conn.listener.onText(conn, text);
                return;
            }
            if (!conn.joined.isDone()) {
                if (ByteBufUtil.indexOf(Unpooled.wrappedBuffer(PHX_REPLY), text) >= 0) {
                    conn.joined.complete(ByteBufUtil.indexOf(Unpooled.wrappedBuffer(STATUS_OK), text) >= 0);
                }
                return;
            }
            conn.listener.onText(conn, text);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            if (!closing) {
                closedUnexpectedly.incrementAndGet();
            }
            conn.open.completeExceptionally(new IllegalStateException("closed before handshake"));
            conn.joined.complete(false);
            if (conn.channel != null) {
                conn.listener.onClose(conn);
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            conn.open.completeExceptionally(cause);
            ctx.close();
        }
    }

    /** Runs {@code task} on one of the event loops after {@code delayMs}. */
    void schedule(Runnable task, long delayMs) {
        group.schedule(task, delayMs, TimeUnit.MILLISECONDS);
    }

    void closeAll(List<Conn> conns) {
        closing = true;
        for (Conn c : conns) {
            if (c.channel != null) {
                c.channel.close();
            }
        }
        for (Conn c : conns) {
            if (c.channel != null) {
                c.channel.closeFuture().awaitUninterruptibly(5000);
            }
        }
        closing = false;
    }

    @Override
    public void close() {
        closing = true;
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
