package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.util.function.Consumer;

/** Byte-for-byte forwarding between two sockets, shared by the test TCP proxies. */
final class SocketSplice {
    private SocketSplice() {}

    /**
     * Copies each socket's input to the other's output on two virtual threads until either side
     * closes; then closes both and passes each to {@code onClosed}.
     */
    static void start(Socket downstream, Socket upstream, String name, Consumer<Socket> onClosed) {
        Thread.ofVirtual().name(name + "-up").start(() -> pump(downstream, upstream, onClosed));
        Thread.ofVirtual().name(name + "-down").start(() -> pump(upstream, downstream, onClosed));
    }

    private static void pump(Socket from, Socket to, Consumer<Socket> onClosed) {
        byte[] buffer = new byte[8192];
        try (InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream()) {
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
        } catch (IOException e) {
            // either side closed or reset: the splice ends
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            onClosed.accept(from);
            onClosed.accept(to);
        }
    }

    static void closeQuietly(AutoCloseable closeable) {
        try {
            closeable.close();
        } catch (Exception e) {
            // already closed
        }
    }
}
