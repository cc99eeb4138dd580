package dev.aura.realtime.bench;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Where the load clients' sockets come from, and how many this machine allows. One source address
 * has about 28,000 ephemeral ports ({@code net.ipv4.ip_local_port_range} 32768–60999) towards one
 * server port, so 100,000 sockets to one ws-front need several: clients bind round robin to
 * 127.0.0.2 … 127.0.0.9 (Linux routes all of 127.0.0.0/8 to the loopback device, no set-up needed),
 * eight times the ports of one address.
 */
final class LoopbackSources {
    private static final List<InetAddress> SOURCES = sources();
    /** Descriptors a JVM holds besides its sockets (jars, epoll, pipes, JFR, logs), with margin. */
    static final int RESERVED_FDS = 1_000;

    private LoopbackSources() {}

    /** The local address of client number {@code index}, port picked by the kernel. */
    static InetSocketAddress of(int index) {
        return new InetSocketAddress(SOURCES.get(Math.floorMod(index, SOURCES.size())), 0);
    }

    /**
     * The open files limit of this process ({@code ulimit -n}, inherited by the services it starts),
     * or {@link Integer#MAX_VALUE} when unlimited or unreadable.
     */
    static int openFilesLimit() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
                if (line.startsWith("Max open files")) {
                    String soft =
                            line.substring("Max open files".length()).trim().split("\\s+")[0];
                    return soft.equals("unlimited") ? Integer.MAX_VALUE : Integer.parseInt(soft);
                }
            }
        } catch (IOException | RuntimeException e) {
            // unknown: do not cap
        }
        return Integer.MAX_VALUE;
    }

    /**
     * How many client sockets a figure may open when this JVM and the server each hold one
     * descriptor per socket: {@code wanted}, or less when the open files limit is lower.
     */
    static int capToOpenFiles(int wanted) {
        return (int) Math.min(wanted, Math.max(0L, (long) openFilesLimit() - RESERVED_FDS));
    }

    private static List<InetAddress> sources() {
        List<InetAddress> out = new ArrayList<>();
        for (int i = 2; i <= 9; i++) {
            try {
                out.add(InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) i}));
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        }
        return out;
    }
}
