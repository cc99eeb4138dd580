package dev.aura.realtime.e2e.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.WireJson;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * A raw vsn 2.0.0 Phoenix socket to one ws-front replica, as a hostile client speaks it (frames
 * realtime-js would not build); every text message it receives, parsed.
 */
final class RawSocket implements WebSocket.Listener, AutoCloseable {
    private static final ObjectMapper JSON = WireJson.mapper();
    private static final Duration WAIT = Duration.ofSeconds(20);

    final List<JsonNode> received = new CopyOnWriteArrayList<>();
    private final StringBuilder partial = new StringBuilder();
    private final WebSocket ws;

    RawSocket(int port, String apikey) throws Exception {
        ws = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .buildAsync(
                        URI.create("ws://127.0.0.1:" + port + "/realtime/v1/websocket?vsn=2.0.0&apikey=" + apikey),
                        this)
                .get(10, TimeUnit.SECONDS);
    }

    void send(String frame) throws Exception {
        ws.sendText(frame, true).get(30, TimeUnit.SECONDS);
    }

    /** Sends a {@code phx_join} of {@code topic} with {@code config} (JSON) under join ref and ref {@code ref}. */
    void join(String ref, String topic, String config) throws Exception {
        send("[\"" + ref + "\",\"" + ref + "\",\"" + topic + "\",\"phx_join\",{\"config\":" + config + "}]");
    }

    /** {@link #join} and its reply's payload ({@code {"status":..,"response":..}}). */
    JsonNode joinAndReply(String ref, String topic, String config) throws Exception {
        join(ref, topic, config);
        return replyTo(ref).path(4);
    }

    @Override
    public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            try {
                received.add(JSON.readTree(partial.toString()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            partial.setLength(0);
        }
        w.request(1);
        return null;
    }

    /** The first reply to {@code ref}, any topic (a retry needs a new ref). */
    JsonNode replyTo(String ref) {
        Awaitility.await("reply to " + ref)
                .atMost(WAIT)
                .until(() -> received.stream()
                        .anyMatch(f -> ref.equals(f.path(1).asText())
                                && "phx_reply".equals(f.path(3).asText())));
        return received.stream()
                .filter(f -> ref.equals(f.path(1).asText())
                        && "phx_reply".equals(f.path(3).asText()))
                .findFirst()
                .orElseThrow();
    }

    /** The error reason of a reply payload, or "" for an ok one. */
    static String reason(JsonNode reply) {
        return reply.path("response").path("reason").asText("");
    }

    @Override
    public void close() {
        ws.abort();
    }
}
