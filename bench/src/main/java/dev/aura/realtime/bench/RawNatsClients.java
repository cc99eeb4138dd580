package dev.aura.realtime.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
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
import io.netty.handler.codec.LineBasedFrameDecoder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The fan-out baseline: plain NATS subscribers, one TCP connection each, speaking the text
 * protocol directly on the same Netty event loops as {@link WsClients} (so both sides of the
 * comparison pay the same client cost). Payloads must contain no CR/LF.
 */
final class RawNatsClients implements AutoCloseable {
    /** Receives each MSG payload (called on an event loop). */
    interface Listener {
        void onPayload(int index, ByteBuf payload);
    }

    private final EventLoopGroup group;
    private final List<Channel> channels = new ArrayList<>();

    RawNatsClients(int threads) {
        group = new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
    }

    /**
     * Connects {@code n} subscribers of {@code subject} as NATS user {@code user}; returns once
     * every SUB was acknowledged by a PONG.
     */
    void subscribeMany(int port, String user, String password, String subject, int n, int inFlight, Listener listener)
            throws InterruptedException {
        String connect = "CONNECT {\"verbose\":false,\"pedantic\":false,\"user\":\"" + user + "\",\"pass\":\""
                + password + "\"}\r\n";
        Semaphore permits = new Semaphore(inFlight);
        List<CompletableFuture<Void>> ready = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            permits.acquire();
            CompletableFuture<Void> subscribed = new CompletableFuture<>();
            subscribed.whenComplete((ok, err) -> permits.release());
            ready.add(subscribed);
            int index = i;
            new Bootstrap()
                    .group(group)
                    .channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast(
                                            new LineBasedFrameDecoder(1 << 20),
                                            new Handler(index, connect, subject, subscribed, listener));
                        }
                    })
                    .connect(new InetSocketAddress("127.0.0.1", port), LoopbackSources.of(index))
                    .addListener(f -> {
                        if (!f.isSuccess()) {
                            subscribed.completeExceptionally(f.cause());
                        } else {
                            synchronized (channels) {
                                channels.add(((io.netty.channel.ChannelFuture) f).channel());
                            }
                        }
                    });
        }
        for (CompletableFuture<Void> f : ready) {
            f.join();
        }
    }

    private static final class Handler extends SimpleChannelInboundHandler<ByteBuf> {
        private final int index;
        private final String connect;
        private final String subject;
        private final CompletableFuture<Void> subscribed;
        private final Listener listener;
        private boolean expectPayload;

        Handler(int index, String connect, String subject, CompletableFuture<Void> subscribed, Listener listener) {
            this.index = index;
            this.connect = connect;
            this.subject = subject;
            this.subscribed = subscribed;
            this.listener = listener;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, ByteBuf line) {
            if (expectPayload) {
                expectPayload = false;
                listener.onPayload(index, line);
                return;
            }
            byte first = line.readableBytes() > 0 ? line.getByte(line.readerIndex()) : 0;
            switch (first) {
                case 'M' -> expectPayload = true; // MSG <subject> <sid> <bytes>
                case 'I' ->
                    ctx.writeAndFlush(Unpooled.copiedBuffer(
                            connect + "SUB " + subject + " 1\r\nPING\r\n", StandardCharsets.US_ASCII));
                case 'P' -> {
                    String s = line.toString(StandardCharsets.US_ASCII);
                    if (s.startsWith("PING")) {
                        ctx.writeAndFlush(Unpooled.copiedBuffer("PONG\r\n", StandardCharsets.US_ASCII));
                    } else if (s.startsWith("PONG")) {
                        subscribed.complete(null);
                    }
                }
                case '-' ->
                    subscribed.completeExceptionally(
                            new IllegalStateException(line.toString(StandardCharsets.US_ASCII)));
                default -> {}
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            subscribed.completeExceptionally(cause);
            ctx.close();
        }
    }

    @Override
    public void close() {
        synchronized (channels) {
            channels.forEach(Channel::close);
        }
        group.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
