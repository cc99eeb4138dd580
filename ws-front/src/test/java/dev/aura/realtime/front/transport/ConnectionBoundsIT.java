package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.front.FrontApp;
import dev.aura.realtime.front.testing.FrontCluster;
import dev.aura.realtime.front.testing.FrontFixture;
import dev.aura.realtime.front.testing.LeakWatch;
import dev.aura.realtime.testkit.RawWebSocket;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23 point 4, connection-level bounds before (and just after) authentication, on raw
 * sockets against one real ws-front: an idle keep-alive connection, a dribbled body, a dribbled
 * second request head, a fragmented WebSocket message that never ends or grows too large, a
 * 2^62-byte frame header; and what must not regress: several requests on one keep-alive
 * connection, an SSE stream and a WebSocket outliving the keep-alive timeout.
 *
 * <p>Failed before the fix (run against e639a6f): the idle keep-alive connection, the dribbled
 * body (Content-Length and chunked), the dribbled second head and the never-finished fragmented
 * message all stayed open until the test's 10 s read timeout ({@code SocketTimeoutException});
 * fragments over {@code WS_MAX_FRAME_BYTES} were closed without a close frame (the aggregator's
 * {@code TooLongFrameException} reached the session, which closed the channel). The 2^62-byte
 * header was already refused with 1009 by Netty's frame decoder, and the three must-not-regress
 * cases passed.
 */
class ConnectionBoundsIT {
    private static final int KEEP_ALIVE_MS = 1000;
    private static final int BODY_MS = 500;
    private static final int FRAGMENT_MS = 500;
    private static final int MAX_FRAME = 4096;
    /** Far above every bound under test, far below "never": a loaded 2-core machine stays inside. */
    private static final int GENEROUS_MS = 10_000;

    private static FrontCluster cluster;
    private static FrontApp app;

    @BeforeAll
    static void start() throws Exception {
        LeakWatch.install();
        cluster = FrontCluster.start(Map.of(
                "HTTP_KEEP_ALIVE_TIMEOUT_MS", Integer.toString(KEEP_ALIVE_MS),
                "HTTP_BODY_TIMEOUT_MS", Integer.toString(BODY_MS),
                "WS_FRAGMENT_TIMEOUT_MS", Integer.toString(FRAGMENT_MS),
                "WS_MAX_FRAME_BYTES", Integer.toString(MAX_FRAME),
                "SSE_HEARTBEAT_MS", "200"));
        app = cluster.replica("bounds");
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
        LeakWatch.assertNoLeaks();
    }

    @Test
    void anIdleKeepAliveConnectionIsClosedAfterTheTimeout() throws Exception {
        try (Socket s = open()) {
            assertThat(get(s, "/health")).startsWith("HTTP/1.1 200");
            long t0 = System.nanoTime();
            assertThat(closedByServer(s))
                    .as("idle keep-alive connection closed")
                    .isTrue();
            long ms = (System.nanoTime() - t0) / 1_000_000;
            System.out.printf("idle keep-alive connection closed after %d ms%n", ms);
            assertThat(ms).as("not before the timeout").isGreaterThanOrEqualTo(KEEP_ALIVE_MS / 2);
        }
    }

    @Test
    void aKeepAliveClientRequestingWithinTheTimeoutKeepsItsConnection() throws Exception {
        try (Socket s = open()) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 6; i++) {
                assertThat(get(s, "/health")).as("request %d", i).startsWith("HTTP/1.1 200");
                Thread.sleep(KEEP_ALIVE_MS / 3);
            }
            assertThat(get(s, "/")).startsWith("HTTP/1.1 200").contains("text/html");
            assertThat((System.nanoTime() - t0) / 1_000_000)
                    .as("the connection outlived one keep-alive timeout")
                    .isGreaterThan(KEEP_ALIVE_MS);
        }
    }

    @Test
    void aDribbledContentLengthBodyIsAnswered408AndClosed() throws Exception {
        try (Socket s = open()) {
            write(
                    s,
                    "POST /api/broadcast HTTP/1.1\r\nHost: x\r\napikey: " + FrontFixture.anonKey()
                            + "\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"messages\":");
            try (Dribbler d = new Dribbler(s, " ")) {
                assertRequestTimeout(s);
            }
        }
    }

    @Test
    void aDribbledChunkedBodyIsAnswered408AndClosed() throws Exception {
        try (Socket s = open()) {
            assertThat(get(s, "/health")).startsWith("HTTP/1.1 200"); // also on a reused connection
            write(
                    s,
                    "POST /api/broadcast HTTP/1.1\r\nHost: x\r\napikey: " + FrontFixture.anonKey()
                            + "\r\nTransfer-Encoding: chunked\r\n\r\n");
            try (Dribbler d = new Dribbler(s, "1\r\n \r\n")) {
                assertRequestTimeout(s);
            }
        }
    }

    @Test
    void aDribbledSecondRequestHeadIsClosed() throws Exception {
        try (Socket s = open()) {
            assertThat(get(s, "/health")).startsWith("HTTP/1.1 200");
            write(s, "GET /health HTTP/1.1\r\nHost: x\r\n");
            try (Dribbler d = new Dribbler(s, "X-Slow: 1\r\n")) {
                assertThat(closedByServer(s)).as("dribbled second head closed").isTrue();
            }
        }
    }

    @Test
    void aFragmentedMessageNeverFinishedIsClosedWith1008() throws Exception {
        try (Socket s = upgraded()) {
            s.getOutputStream().write(RawWebSocket.maskedFrame(false, 1, bytes("[null,\"1\",")));
            // continuation frames keep the socket busy (so the idle timeout never fires), never FIN
            try (Dribbler d = new Dribbler(s, RawWebSocket.maskedFrame(false, 0, bytes(" ")))) {
                String close = RawWebSocket.readClose(s.getInputStream());
                System.out.println("never-finished fragmented message: close " + close);
                assertThat(close).startsWith("1008 ").contains("fragmented message");
            }
        }
    }

    @Test
    void fragmentsOverTheMaxFrameBytesAreClosedWith1009() throws Exception {
        try (Socket s = upgraded()) {
            OutputStream out = s.getOutputStream();
            byte[] part = new byte[1000];
            Arrays.fill(part, (byte) ' ');
            out.write(RawWebSocket.maskedFrame(false, 1, part));
            for (int i = 0; i < 5; i++) {
                try {
                    out.write(RawWebSocket.maskedFrame(false, 0, part));
                } catch (IOException closedWhileSending) {
                    break;
                }
            }
            String close = RawWebSocket.readClose(s.getInputStream());
            System.out.println("fragments over the limit: close " + close);
            assertThat(close).startsWith("1009");
        }
    }

    @Test
    void aFrameHeaderOf2To62BytesIsRefusedWith1009() throws Exception {
        try (Socket s = upgraded()) {
            byte[] header = {(byte) 0x81, (byte) 0xFF, 0x40, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4};
            s.getOutputStream().write(header);
            String close = RawWebSocket.readClose(s.getInputStream());
            assertThat(close).startsWith("1009");
        }
    }

    @Test
    void sseStreamsAndWebSocketsOutliveTheKeepAliveTimeout() throws Exception {
        try (Socket sse = open();
                Socket ws = upgraded()) {
            write(
                    sse,
                    "GET /realtime/v1/sse?topic=room&apikey=" + FrontFixture.anonKey()
                            + " HTTP/1.1\r\nHost: x\r\n\r\n");
            InputStream in = sse.getInputStream();
            assertThat(RawWebSocket.readUntil(in, "\r\n\r\n")).startsWith("HTTP/1.1 200");
            long until =
                    System.nanoTime() + Duration.ofMillis(3L * KEEP_ALIVE_MS).toNanos();
            byte[] buf = new byte[4096];
            while (System.nanoTime() < until) {
                assertThat(in.read(buf)).as("the SSE stream is still open").isNotNegative();
                ws.getOutputStream().write(RawWebSocket.maskedPing());
            }
            ws.getOutputStream().write(RawWebSocket.maskedText("[null,\"7\",\"phoenix\",\"heartbeat\",{}]"));
            assertThat(RawWebSocket.readUntil(ws.getInputStream(), "\"7\",\"phoenix\",\"phx_reply\""))
                    .as("the WebSocket is still served")
                    .isNotEmpty();
        }
    }

    private static void assertRequestTimeout(Socket s) throws IOException {
        String response = readResponse(s.getInputStream());
        System.out.println("dribbled body answered: " + response.replace("\r\n", " | "));
        assertThat(response)
                .startsWith("HTTP/1.1 408 Request Timeout")
                .containsIgnoringCase("connection: close")
                .contains("{\"error\":\"Request Timeout: ");
        assertThat(closedByServer(s)).as("closed after the 408").isTrue();
        try (Socket scrape = open()) {
            assertThat(get(scrape, "/metrics"))
                    .as("counted")
                    .containsPattern("aura_ws_connection_timeouts_total\\{[^}]*kind=\"request_body\"[^}]*} [1-9]");
        }
    }

    private static Socket open() throws IOException {
        Socket s = new Socket("127.0.0.1", app.port());
        s.setSoTimeout(GENEROUS_MS);
        return s;
    }

    private static Socket upgraded() throws IOException {
        Socket s = open();
        String url = FrontFixture.wsUrl(app.port());
        s.getOutputStream().write(RawWebSocket.upgradeRequest(url.substring(url.indexOf("/realtime"))));
        assertThat(RawWebSocket.readUntil(s.getInputStream(), "\r\n\r\n")).startsWith("HTTP/1.1 101");
        return s;
    }

    private static String get(Socket s, String path) throws IOException {
        write(s, "GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n");
        return readResponse(s.getInputStream());
    }

    /** One response with a Content-Length body: head and body as ISO-8859-1 text. */
    private static String readResponse(InputStream in) throws IOException {
        String head = RawWebSocket.readUntil(in, "\r\n\r\n");
        int length = 0;
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).strip());
            }
        }
        return head + new String(in.readNBytes(length), StandardCharsets.ISO_8859_1);
    }

    /** Waits for the server's close: end of stream or a reset within the generous bound. */
    private static boolean closedByServer(Socket s) throws IOException {
        try {
            InputStream in = s.getInputStream();
            byte[] buf = new byte[1024];
            while (true) {
                if (in.read(buf) < 0) {
                    return true;
                }
            }
        } catch (SocketTimeoutException stillOpen) {
            return false;
        } catch (IOException reset) {
            return true;
        }
    }

    private static void write(Socket s, String text) throws IOException {
        s.getOutputStream().write(text.getBytes(StandardCharsets.US_ASCII));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    /** Writes {@code bytes} every 100 ms until closed or the server closes the socket (slowloris). */
    private static final class Dribbler implements AutoCloseable {
        private final Thread thread;

        Dribbler(Socket s, String text) {
            this(s, text.getBytes(StandardCharsets.US_ASCII));
        }

        Dribbler(Socket s, byte[] bytes) {
            thread = Thread.ofVirtual().start(() -> {
                try {
                    while (true) {
                        Thread.sleep(100);
                        s.getOutputStream().write(bytes);
                    }
                } catch (InterruptedException | IOException stopped) {
                    // closed by the test or by the server
                }
            });
        }

        @Override
        public void close() throws InterruptedException {
            thread.interrupt();
            thread.join(2_000);
        }
    }
}
