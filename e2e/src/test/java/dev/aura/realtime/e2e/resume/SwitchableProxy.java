package dev.aura.realtime.e2e.resume;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A local TCP forwarder a client connects to instead of a replica, as a load balancer or a
 * network path: new connections go to the current upstream port ({@link #switchTo}); {@link
 * #drop()} closes every forwarded connection and refuses new ones (a network drop) until {@link
 * #restore()}.
 */
final class SwitchableProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicInteger forwarded = new AtomicInteger();
    private volatile int upstreamPort;
    private volatile boolean dropped;

    SwitchableProxy(int upstreamPort) throws IOException {
        this.upstreamPort = upstreamPort;
        this.listener = new ServerSocket(0, 100, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().name("test-switchable-proxy").daemon().start(this::acceptLoop);
    }

    /** The realtime-js endpoint through this proxy. */
    String url() {
        return "ws://127.0.0.1:" + listener.getLocalPort() + "/realtime/v1";
    }

    /** New connections go to {@code port} from now on; open ones stay where they are. */
    void switchTo(int port) {
        upstreamPort = port;
    }

    /** Closes every forwarded connection and refuses new ones until {@link #restore()}. */
    void drop() {
        dropped = true;
        open.forEach(SwitchableProxy::closeQuietly);
    }

    void restore() {
        dropped = false;
    }

    /** How many connections were forwarded so far. */
    int forwarded() {
        return forwarded.get();
    }

    @Override
    public void close() {
        closeQuietly(listener);
        drop();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket downstream;
            try {
                downstream = listener.accept();
            } catch (IOException closed) {
                continue;
            }
            if (dropped) {
                closeQuietly(downstream);
                continue;
            }
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), upstreamPort), 2_000);
            } catch (IOException refused) {
                closeQuietly(upstream);
                closeQuietly(downstream); // the client sees the connection close and retries
                continue;
            }
            forwarded.incrementAndGet();
            open.add(downstream);
            open.add(upstream);
            Thread.ofVirtual().start(() -> pump(downstream, upstream));
            Thread.ofVirtual().start(() -> pump(upstream, downstream));
        }
    }

    private void pump(Socket from, Socket to) {
        byte[] buffer = new byte[16384];
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException closed) {
            // either side closed or was reset
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            open.remove(from);
            open.remove(to);
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception ignored) {
            // already closed
        }
    }
}
