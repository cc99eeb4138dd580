package dev.aura.realtime.front.transport;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.AdaptiveRecvByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one HTTP/WebSocket port. Threads: one acceptor thread and {@code ioThreads} event loops
 * (epoll when available, else NIO), all named {@code aura-ws-*}. Each accepted socket starts
 * with the HTTP pipeline of {@link FrontInitializer}, which becomes a WebSocket or SSE pipeline.
 * Outbound buffering per socket is bounded by the write buffer water marks. Inbound, each read
 * of a socket takes at most {@value #MAX_READ_BYTES} bytes, and {@link FairReads} lets a socket
 * read once per turn of its loop (docs/design.md D8).
 */
public final class FrontServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(FrontServer.class);
    /**
     * Most bytes one read of a socket takes (Netty's default: 16 reads of up to 64 KiB in a row,
     * about 10,000 joins, before another socket is served).
     */
    static final int MAX_READ_BYTES = 16 * 1024;

    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel serverChannel;
    private final AtomicBoolean draining = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * Binds and starts serving.
     *
     * @param port TCP port (0 picks a free one)
     * @param ioThreads event loop threads (0 = Netty's default)
     * @param lowWaterBytes socket becomes writable again below this many queued bytes
     * @param highWaterBytes socket becomes unwritable above this many queued bytes
     */
    public FrontServer(TransportContext context, int port, int ioThreads, int lowWaterBytes, int highWaterBytes)
            throws InterruptedException {
        boolean epoll = Epoll.isAvailable();
        var factory = epoll ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        this.boss = new MultiThreadIoEventLoopGroup(1, new DefaultThreadFactory("aura-ws-accept"), factory);
        this.workers = new MultiThreadIoEventLoopGroup(ioThreads, new DefaultThreadFactory("aura-ws-io"), factory);
        Class<? extends ServerChannel> channelClass =
                epoll ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
        ServerBootstrap bootstrap = new ServerBootstrap()
                .group(boss, workers)
                .channel(channelClass)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(
                        ChannelOption.RCVBUF_ALLOCATOR,
                        new AdaptiveRecvByteBufAllocator(64, 2048, MAX_READ_BYTES).maxMessagesPerRead(1))
                .childOption(
                        ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(lowWaterBytes, highWaterBytes))
                .childHandler(new FrontInitializer(context, draining));
        try {
            this.serverChannel = bootstrap.bind(port).sync().channel();
        } catch (InterruptedException | RuntimeException e) {
            boss.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            workers.shutdownGracefully(0, 0, TimeUnit.MILLISECONDS);
            throw e;
        }
        log.info("listening on port {} ({})", port(), epoll ? "epoll" : "nio");
    }

    /** The bound port. */
    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    /** Stops accepting connections; new upgrades get 503 on sockets already open. Idempotent. */
    public void stopAccepting() {
        if (draining.compareAndSet(false, true)) {
            serverChannel.close().awaitUninterruptibly(2, TimeUnit.SECONDS);
        }
    }

    /** Closes the port and every connection, then stops the event loops. Idempotent. */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        stopAccepting();
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(3, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    }
}
