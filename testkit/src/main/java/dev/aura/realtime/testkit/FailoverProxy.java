package dev.aura.realtime.testkit;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP forwarder in front of several replicas, like a load balancer without health checks of its
 * own: each new connection goes to the first target in order that accepts the TCP connection
 * (a killed replica refuses, so its clients land on the next one when they reconnect). A
 * forwarded connection lives as long as both of its sockets; when the replica behind it dies the
 * client sees the connection close.
 */
public final class FailoverProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final List<Integer> targetPorts;
    private final AtomicInteger[] accepted;

    public FailoverProxy(List<Integer> targetPorts) throws IOException {
        this.targetPorts = List.copyOf(targetPorts);
        this.accepted = new AtomicInteger[targetPorts.size()];
        for (int i = 0; i < accepted.length; i++) {
            accepted[i] = new AtomicInteger();
        }
        this.listener = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        Thread.ofPlatform().name("test-failover-proxy-accept").daemon().start(this::acceptLoop);
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** How many connections were forwarded to target {@code i} so far. */
    public int forwardedTo(int i) {
        return accepted[i].get();
    }

    @Override
    public void close() {
        SocketSplice.closeQuietly(listener);
    }

    private void acceptLoop() {
        while (!listener.isClosed()) {
            Socket downstream;
            try {
                downstream = listener.accept();
            } catch (IOException e) {
                continue; // listener closed
            }
            Thread.ofVirtual().name("test-failover-proxy-connect").start(() -> forward(downstream));
        }
    }

    private void forward(Socket downstream) {
        for (int i = 0; i < targetPorts.size(); i++) {
            Socket upstream = new Socket();
            try {
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPorts.get(i)), 2_000);
            } catch (IOException refused) {
                SocketSplice.closeQuietly(upstream);
                continue;
            }
            accepted[i].incrementAndGet();
            SocketSplice.start(downstream, upstream, "test-failover-proxy", s -> {});
            return;
        }
        SocketSplice.closeQuietly(downstream); // no target reachable: the client sees the connection close
    }
}
