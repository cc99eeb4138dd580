package dev.aura.realtime.e2e.resume;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A raw Phoenix vsn 1.0.0 socket that keeps only what a large-volume test needs of each frame: for
 * postgres_changes, the record's {@code id} and {@code sent_ms} column and when the frame arrived;
 * the system messages whole. Records are parsed and dropped, so a client replayed 60 MB holds
 * kilobytes.
 */
final class RawChanges implements WebSocket.Listener, AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** One change as received: its row id, the row's {@code sent_ms} (0 without one), its arrival (epoch ms). */
    record Change(int id, long sentMs, long arrivedMs) {}

    final List<Change> changes = new CopyOnWriteArrayList<>();
    final List<JsonNode> system = new CopyOnWriteArrayList<>();
    private final StringBuilder partial = new StringBuilder();
    private final WebSocket ws;
    private volatile boolean closed;

    RawChanges(String wsUrl, String apikey) throws Exception {
        ws = HttpClient.newHttpClient()
                .newWebSocketBuilder()
                .buildAsync(URI.create(wsUrl + "/websocket?apikey=" + apikey + "&vsn=1.0.0"), this)
                .get(30, TimeUnit.SECONDS);
    }

    @Override
    public void onOpen(WebSocket w) {
        w.request(1);
    }

    @Override
    public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            long now = System.currentTimeMillis();
            try {
                JsonNode f = JSON.readTree(partial.toString());
                if ("postgres_changes".equals(f.path("event").asText())) {
                    JsonNode r = f.path("payload").path("data").path("record");
                    changes.add(
                            new Change(r.path("id").asInt(), r.path("sent_ms").asLong(), now));
                } else if ("system".equals(f.path("event").asText())) {
                    system.add(f.path("payload"));
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            partial.setLength(0);
        }
        w.request(1);
        return null;
    }

    @Override
    public void onError(WebSocket w, Throwable error) {
        closed = true;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket w, int status, String reason) {
        closed = true;
        return null;
    }

    boolean closed() {
        return closed;
    }

    /** Joins {@code topic} with INSERTs of {@code table} as the user of {@code token}. */
    void join(String topic, String table, String token) {
        ws.sendText(
                "{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":{"
                        + "\"postgres_changes\":[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"" + table
                        + "\"}]},\"access_token\":\"" + token + "\"},\"ref\":\"1\",\"join_ref\":\"1\"}",
                true);
    }

    /** Whether "Subscribed to PostgreSQL" arrived. */
    boolean subscribed() {
        return system.stream().anyMatch(s -> s.path("message").asText().contains("Subscribed to PostgreSQL"));
    }

    /** The ids received, in order. */
    List<Integer> ids() {
        List<Integer> out = new ArrayList<>();
        changes.forEach(c -> out.add(c.id()));
        return out;
    }

    /** The {@code ResumeNotPossible} reasons received. */
    List<String> notPossible() {
        return system.stream()
                .filter(s -> "ResumeNotPossible".equals(s.path("code").asText()))
                .map(s -> s.path("reason").asText())
                .toList();
    }

    /** Sends a heartbeat (the server closes a socket silent for its idle timeout). */
    void heartbeat() {
        ws.sendText("{\"topic\":\"phoenix\",\"event\":\"heartbeat\",\"payload\":{},\"ref\":\"hb\"}", true);
    }

    static Duration since(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    @Override
    public void close() {
        ws.abort(); // as a dropped network: no close handshake
    }
}
