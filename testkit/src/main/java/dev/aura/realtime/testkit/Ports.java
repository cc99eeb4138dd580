package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Hands out free TCP ports for test servers (free on every local address).
 *
 * <p>The operating system picks an ephemeral port; a port is never handed out twice by the same
 * JVM, so two fixtures started in one test run cannot collide. Another process may still grab a
 * port between {@link #free()} and its use: fixtures that bind it retry with a new port.
 */
public final class Ports {
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private Ports() {}

    /**
     * Returns a TCP port that was free on every local address a moment ago and that this JVM has not handed
     * out before.
     *
     * @return a port number in the ephemeral range
     * @throws UncheckedIOException if no socket can be bound
     */
    public static int free() {
        for (int attempt = 0; attempt < 50; attempt++) {
            // The wildcard address, as the binaries bind their ports: a port free on 127.0.0.1 alone
            // may be the local port of a client socket on another local address (127.0.0.x), and
            // the binary's wildcard bind then fails with "Address already in use".
            try (ServerSocket socket = new ServerSocket(0, 1)) {
                int port = socket.getLocalPort();
                if (HANDED_OUT.add(port)) {
                    return port;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("cannot bind a probe socket", e);
            }
        }
        throw new IllegalStateException("no unused free port found after 50 attempts");
    }
}
