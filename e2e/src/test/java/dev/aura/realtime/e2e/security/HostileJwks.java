package dev.aura.realtime.e2e.security;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A JWKS URL as a broken or hostile provider serves it, on 127.0.0.1: one that accepts and never
 * answers ({@link Kind#SILENT}), one that answers its headers and then dribbles a byte every
 * 200 ms ({@link Kind#DRIBBLING}), and one that streams an endless JWKS as fast as it is read
 * ({@link Kind#HUGE}). Counts the connections it accepted and the body bytes it got written, and
 * whether the fetcher hung up.
 */
final class HostileJwks implements AutoCloseable {
    enum Kind {
        SILENT,
        DRIBBLING,
        HUGE
    }

    private final Kind kind;
    private final ServerSocket server;
    private final AtomicInteger accepted = new AtomicInteger();
    private final AtomicLong written = new AtomicLong();
    private final AtomicInteger hungUp = new AtomicInteger();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    HostileJwks(Kind kind) {
        this.kind = kind;
        try {
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        acceptor = Thread.ofPlatform().daemon().name("hostile-jwks-" + kind).start(this::accept);
    }

    String url() {
        return "http://127.0.0.1:" + server.getLocalPort() + "/.well-known/jwks.json";
    }

    int accepted() {
        return accepted.get();
    }

    long written() {
        return written.get();
    }

    /** Connections whose reader closed them while this server was still sending or silent. */
    int hungUp() {
        return hungUp.get();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                accepted.incrementAndGet();
                open.add(s);
                Thread.ofVirtual().start(() -> serve(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            InputStream in = s.getInputStream();
            readHead(in);
            OutputStream out = s.getOutputStream();
            switch (kind) {
                case SILENT -> {
                    // never answers; a read returns -1 once the fetcher hangs up
                    if (in.read() < 0) {
                        hungUp.incrementAndGet();
                    }
                }
                case DRIBBLING -> {
                    out.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"
                            .getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    while (true) {
                        Thread.sleep(200);
                        out.write(' ');
                        out.flush();
                        written.incrementAndGet();
                    }
                }
                case HUGE -> {
                    out.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{\"keys\":["
                            .getBytes(StandardCharsets.US_ASCII));
                    byte[] chunk = ("{\"kty\":\"oct\",\"k\":\"" + "A".repeat(4000) + "\"},")
                            .getBytes(StandardCharsets.US_ASCII);
                    while (true) {
                        out.write(chunk);
                        written.addAndGet(chunk.length);
                    }
                }
            }
        } catch (IOException e) {
            hungUp.incrementAndGet(); // the fetcher closed while we were writing
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void readHead(InputStream in) throws IOException {
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("closed before the request head ended");
            }
            matched = c == end[matched] ? matched + 1 : (c == '\r' ? 1 : 0);
        }
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing a test server
        }
        for (Socket s : open) {
            try {
                s.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
        acceptor.interrupt();
    }
}
