package dev.aura.realtime.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP forwarder in front of the mock API server that can cut one client off: {@link #cut()}
 * closes every forwarded connection and closes new ones at once (connection reset), as a
 * network partition or a crashed node looks to the others; {@link #heal()} restores it.
 */
public final class PartitionableProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile boolean cut;

    public PartitionableProxy(int targetPort) throws IOException {
        this.targetPort = targetPort;
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().name("test-proxy-accept").daemon().start(this::acceptLoop);
    }

    public int port() {
        return listener.getLocalPort();
    }

    public void cut() {
        cut = true;
        open.forEach(SocketSplice::closeQuietly);
        open.clear();
    }

    public void heal() {
        cut = false;
    }

    @Override
    public void close() {
        SocketSplice.closeQuietly(listener);
        cut();
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            try {
                Socket downstream = listener.accept();
                if (cut) {
                    SocketSplice.closeQuietly(downstream);
                    continue;
                }
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                open.add(downstream);
                open.add(upstream);
                SocketSplice.start(downstream, upstream, "test-proxy", open::remove);
            } catch (IOException e) {
                // listener closed, or the target refused: the client sees a reset
            }
        }
    }
}
