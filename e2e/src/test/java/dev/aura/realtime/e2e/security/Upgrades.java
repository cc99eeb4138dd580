package dev.aura.realtime.e2e.security;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.testkit.RawWebSocket;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;

/**
 * What a client sees of ws-front's HTTP side: the WebSocket upgrade on a raw socket and its first
 * join (a refusal as the HTTP answer Supabase would give, see {@link #afterUpgrade}) with the key in the query or in a header, and the REST
 * broadcast's answer.
 */
final class Upgrades {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newHttpClient();

    /** An HTTP answer: its status and body. */
    record Answer(int status, String body) {
        /** The {@code error} field of a JSON body, or "" when there is none. */
        String error() {
            try {
                return JSON.readTree(body).path("error").asText("");
            } catch (IOException e) {
                return "";
            }
        }
    }

    private Upgrades() {}

    /** The upgrade of {@code /realtime/v1/websocket?vsn=1.0.0&apikey=<apikey>}. */
    static Answer withQueryKey(int port, String apikey) {
        return upgrade(
                port,
                "/realtime/v1/websocket?vsn=1.0.0&apikey=" + URLEncoder.encode(apikey, StandardCharsets.UTF_8),
                Map.of());
    }

    /** The upgrade of {@code /realtime/v1/websocket?vsn=1.0.0} with the key in the {@code apikey} header. */
    static Answer withHeaderKey(int port, String apikey) {
        return upgrade(port, "/realtime/v1/websocket?vsn=1.0.0", Map.of("apikey", apikey));
    }

    /**
     * An accepted upgrade (issue 40: a refused key is said in the protocol so that browsers see
     * it): one join, then the socket's answer. A refused socket answers the join with an error
     * reply and closes with 1008 and {@code "<Code>: <message>"}; that is returned as the HTTP
     * answer Supabase gives at the upgrade (401, or 503 for {@code AuthUnavailable}) with the
     * message as {@code error}. An accepted socket answers the join with {@code ok}: 101.
     */
    private static Answer afterUpgrade(InputStream in, OutputStream out, byte[] head, int bodyStart)
            throws IOException {
        out.write(
                RawWebSocket.maskedText(
                        "{\"topic\":\"realtime:upgrades-probe\",\"event\":\"phx_join\",\"payload\":{\"config\":{}},\"ref\":\"1\",\"join_ref\":\"1\"}"));
        out.flush();
        DataInputStream frames = new DataInputStream(new java.io.SequenceInputStream(
                new java.io.ByteArrayInputStream(head, bodyStart, head.length - bodyStart), in));
        while (true) {
            int b0 = frames.readUnsignedByte();
            int b1 = frames.readUnsignedByte();
            long len = b1 & 0x7f;
            if (len == 126) {
                len = frames.readUnsignedShort();
            } else if (len == 127) {
                len = frames.readLong();
            }
            byte[] payload = new byte[(int) len];
            frames.readFully(payload);
            int opcode = b0 & 0x0f;
            if (opcode == 0x8) {
                int code = payload.length >= 2 ? ((payload[0] & 0xff) << 8) | (payload[1] & 0xff) : 1005;
                String reason =
                        payload.length > 2 ? new String(payload, 2, payload.length - 2, StandardCharsets.UTF_8) : "";
                if (code != 1008) {
                    throw new IOException("socket closed with " + code + " " + reason);
                }
                int colon = reason.indexOf(": ");
                String message = colon < 0 ? reason : reason.substring(colon + 2);
                int status = reason.startsWith("AuthUnavailable") ? 503 : 401;
                return new Answer(
                        status, JSON.createObjectNode().put("error", message).toString());
            }
            if (opcode == 0x1) {
                JsonNode msg = JSON.readTree(payload);
                if ("phx_reply".equals(msg.path("event").asText())
                        && "ok".equals(msg.path("payload").path("status").asText())) {
                    return new Answer(101, "");
                }
            }
        }
    }

    /** A WebSocket upgrade request on a raw socket: the status line's code and the body (empty for 101). */
    static Answer upgrade(int port, String pathAndQuery, Map<String, String> headers) {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            s.setSoTimeout(15_000);
            StringBuilder req = new StringBuilder("GET " + pathAndQuery + " HTTP/1.1\r\n")
                    .append("Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n")
                    .append("Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n");
            headers.forEach((k, v) -> req.append(k).append(": ").append(v).append("\r\n"));
            req.append("\r\n");
            OutputStream out = s.getOutputStream();
            out.write(req.toString().getBytes(StandardCharsets.UTF_8));
            out.flush();
            InputStream in = s.getInputStream();
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            byte[] buf = new byte[4096];
            while (true) {
                String text = got.toString(StandardCharsets.UTF_8);
                int end = text.indexOf("\r\n\r\n");
                if (end >= 0) {
                    int status = Integer.parseInt(text.substring(9, 12));
                    if (status == 101) {
                        return afterUpgrade(in, out, got.toByteArray(), end + 4);
                    }
                    int length = contentLength(text.substring(0, end));
                    if (text.length() - end - 4 >= length) {
                        return new Answer(status, text.substring(end + 4, end + 4 + length));
                    }
                }
                int n = in.read(buf);
                if (n < 0) {
                    throw new IOException("connection closed after: " + text);
                }
                got.write(buf, 0, n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static int contentLength(String head) {
        for (String line : head.split("\r\n")) {
            if (line.toLowerCase().startsWith("content-length:")) {
                return Integer.parseInt(line.substring(15).trim());
            }
        }
        return 0;
    }

    /**
     * {@code POST /realtime/v1/api/broadcast} with one message.
     *
     * @param bearer sent as {@code Authorization: Bearer}; null sends none
     */
    static Answer restBroadcast(int port, String apikey, String bearer, String topic, String event) {
        HttpRequest.Builder r = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + port + "/realtime/v1/api/broadcast"))
                .timeout(Duration.ofSeconds(15))
                .header("Content-Type", "application/json")
                .header("apikey", apikey)
                .POST(HttpRequest.BodyPublishers.ofString("{\"messages\":[{\"topic\":\"" + topic + "\",\"event\":\""
                        + event + "\",\"payload\":{\"n\":1}}]}"));
        if (bearer != null) {
            r.header("Authorization", "Bearer " + bearer);
        }
        try {
            HttpResponse<String> res = HTTP.send(r.build(), HttpResponse.BodyHandlers.ofString());
            return new Answer(res.statusCode(), res.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
