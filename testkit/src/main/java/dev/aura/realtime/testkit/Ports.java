package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Hands out free TCP ports for test servers (free on every local address).
 *
 * <p>The operating system picks an ephemeral port; a port is never handed out twice by the same
 * JVM, so two fixtures started in one test run cannot collide. Another process may still grab a
 * port between {@link #free()} and its use: fixtures that bind it retry with a new port.
 *
 * <p>A port a separate process (a service jar) binds later comes from {@link #forService()}
 * instead: outside the ephemeral range, so the kernel never gives it to a client socket
 * meanwhile (on a loaded machine the suite opens thousands of those), which was the race of
 * {@link #free()} with no way to retry inside the jar.
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

    /** Lowest port of the band {@link #forService()} picks from. */
    static final int SERVICE_LOW = 20_000;

    /**
     * Returns a port that was free on every local address a moment ago, that this JVM has not
     * handed out before, and that lies below the kernel's ephemeral range
     * ({@code net.ipv4.ip_local_port_range}, 32768 by default): no outgoing connection takes it
     * before the service binds it. Picked at random in the band, so JVMs running side by side
     * rarely probe the same port.
     *
     * @throws IllegalStateException when no such port is free after 200 probes
     */
    public static int forService() {
        int high = ephemeralLow() - 1;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = random.nextInt(SERVICE_LOW, high + 1);
            if (HANDED_OUT.contains(port)) {
                continue;
            }
            try (ServerSocket socket = new ServerSocket(port, 1)) {
                if (HANDED_OUT.add(port)) {
                    return port;
                }
            } catch (IOException e) {
                // in use: try another
            }
        }
        throw new IllegalStateException("no free port in " + SERVICE_LOW + "-" + high + " after 200 probes");
    }

    /** The low end of the ephemeral range (Linux's file; 32768, its default, elsewhere). */
    static int ephemeralLow() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range"))
                    .trim();
            int low = Integer.parseInt(range.split("\\s+")[0]);
            return low > SERVICE_LOW + 1000 ? low : 32_768;
        } catch (IOException | RuntimeException e) {
            return 32_768;
        }
    }
}
