package dev.aura.realtime.e2e.scale;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * A raw vsn 1.0.0 Phoenix socket (the JDK WebSocket client) that joins one channel as
 * realtime-js does and times it: {@link #joined} completes with the microseconds from the
 * {@code phx_join} to the moment the channel is SUBSCRIBED: the ok reply, and for a channel with
 * postgres_changes bindings also the {@code system} "Subscribed to PostgreSQL" push. A refused
 * join, or a {@code system} error, completes it exceptionally with the frame.
 */
final class PhxSocket implements WebSocket.Listener, AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();

    private final StringBuilder partial = new StringBuilder();
    private final WebSocket ws;
    final CompletableFuture<Long> joined = new CompletableFuture<>();
    private volatile long sentAt;
    private volatile boolean withBindings;
    private volatile boolean replied;

    PhxSocket(HttpClient http, URI uri) throws Exception {
        ws = http.newWebSocketBuilder().buildAsync(uri, this).get(30, TimeUnit.SECONDS);
    }

    /** realtime-js's join config: one postgres_changes binding on {@code public.<table>} when not null. */
    static String config(String table, boolean privateChannel) {
        String changes = table == null ? "[]" : "[{\"event\":\"*\",\"schema\":\"public\",\"table\":\"" + table + "\"}]";
        return "{\"broadcast\":{\"ack\":false,\"self\":false},\"presence\":{\"key\":\"\",\"enabled\":false},"
                + "\"postgres_changes\":" + changes + ",\"private\":" + privateChannel + "}";
    }

    /** Sends the join; {@link #joined} tells when it is SUBSCRIBED. */
    void join(String topic, String config, String accessToken, boolean bindings) {
        withBindings = bindings;
        sentAt = System.nanoTime();
        ws.sendText(
                "{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":" + config
                        + ",\"access_token\":\"" + accessToken + "\"},\"ref\":\"1\",\"join_ref\":\"1\"}",
                true);
    }

    @Override
    public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
        partial.append(data);
        if (last) {
            String text = partial.toString();
            partial.setLength(0);
            try {
                onFrame(JSON.readTree(text), text);
            } catch (Exception e) {
                joined.completeExceptionally(e);
            }
        }
        w.request(1);
        return null;
    }

    private void onFrame(JsonNode f, String text) {
        long micros = (System.nanoTime() - sentAt) / 1000;
        String event = f.path("event").asText();
        if (event.equals("phx_reply") && "1".equals(f.path("ref").asText())) {
            if (!"ok".equals(f.path("payload").path("status").asText())) {
                joined.completeExceptionally(new IllegalStateException("join refused: " + text));
            } else if (withBindings) {
                replied = true;
            } else {
                joined.complete(micros);
            }
        } else if (event.equals("system") && replied) {
            if ("ok".equals(f.path("payload").path("status").asText())) {
                joined.complete(micros);
            } else {
                joined.completeExceptionally(new IllegalStateException("system error: " + text));
            }
        }
    }

    @Override
    public void onError(WebSocket w, Throwable error) {
        joined.completeExceptionally(error);
    }

    @Override
    public CompletionStage<?> onClose(WebSocket w, int status, String reason) {
        joined.completeExceptionally(new IllegalStateException("closed " + status + " " + reason));
        return null;
    }

    @Override
    public void close() {
        ws.abort();
    }
}
