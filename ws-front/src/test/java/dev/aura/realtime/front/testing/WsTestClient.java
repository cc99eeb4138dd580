package dev.aura.realtime.front.testing;

import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** A raw WebSocket client (JDK) that queues every whole message it receives. */
public final class WsTestClient implements AutoCloseable {
    /** A received message: text, or binary bytes. */
    public record Received(String text, byte[] bytes) {
        public boolean binary() {
            return bytes != null;
        }
    }

    private final BlockingQueue<Received> inbox = new LinkedBlockingQueue<>();
    private final AtomicInteger received = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final WebSocket socket;

    public WsTestClient(HttpClient http, String url) {
        this.socket = http.newWebSocketBuilder()
                .connectTimeout(Duration.ofSeconds(5))
                .buildAsync(URI.create(url), new Listener())
                .join();
    }

    public void send(String text) {
        socket.sendText(text, true).join();
    }

    public void sendBinary(byte[] bytes) {
        socket.sendBinary(ByteBuffer.wrap(bytes), true).join();
    }

    /** The next message within {@code timeout}, or null. */
    public Received poll(Duration timeout) throws InterruptedException {
        return inbox.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Whole messages received so far (also those already polled). */
    public int received() {
        return received.get();
    }

    /** True once the server closed the connection (close frame or a broken socket). */
    public boolean closedByServer() {
        return closed.get();
    }

    @Override
    public void close() {
        socket.abort();
    }

    private final class Listener implements WebSocket.Listener {
        private final StringBuilder text = new StringBuilder();
        private final ByteArrayOutputStream bin = new ByteArrayOutputStream();

        @Override
        public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
            text.append(data);
            if (last) {
                inbox.add(new Received(text.toString(), null));
                received.incrementAndGet();
                text.setLength(0);
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
            byte[] chunk = new byte[data.remaining()];
            data.get(chunk);
            bin.writeBytes(chunk);
            if (last) {
                inbox.add(new Received(null, bin.toByteArray()));
                received.incrementAndGet();
                bin.reset();
            }
            ws.request(1);
            return null;
        }

        @Override
        public CompletionStage<?> onClose(WebSocket ws, int statusCode, String reason) {
            closed.set(true);
            return null;
        }

        @Override
        public void onError(WebSocket ws, Throwable error) {
            closed.set(true);
        }
    }

    /** Text of a binary message, for loose assertions. */
    public static String latin1(byte[] bytes) {
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }
}
