package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Broadcast across two ws-front jars with the real realtime-js: history and
 * {@code broadcast.replay}, channel names through the NATS subject encoding, SSE with
 * {@code Last-Event-ID}, and a reader that stops reading (docs/design.md D4, D7, D8).
 */
class BroadcastSurfaceE2EIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration T = Duration.ofSeconds(10);
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        stack.startCdcWorker(Map.of(), List.of());
        stack.startWsFront(Map.of());
        // replica 1 has small outbound buffers so a client that does not read overflows quickly
        stack.startWsFront(Map.of(
                "WS_WRITE_BUFFER_LOW_BYTES",
                "16384",
                "WS_WRITE_BUFFER_HIGH_BYTES",
                "65536",
                "WS_MAX_OUTBOUND_BYTES",
                "262144",
                "WS_SLOW_CLIENT_TIMEOUT_MS",
                "1000"));
        stack.createProject();
        stack.sql(
                "CREATE TABLE " + stack.table("messages") + "(id bigserial PRIMARY KEY, body text)",
                "GRANT SELECT ON " + stack.table("messages") + " TO aura_anon, aura_authenticated");
        stack.enable("messages");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static boolean broadcast(JsonNode e, String channel) {
        return "broadcast".equals(e.path("type").asText())
                && channel.equals(e.path("channel").asText());
    }

    /** Waits until {@code count} broadcasts arrived on {@code channel}; returns them in order. */
    static List<JsonNode> awaitBroadcasts(RealtimeJsClient js, String channel, int count) throws InterruptedException {
        long deadline = System.nanoTime() + T.toNanos();
        while (true) {
            List<JsonNode> got =
                    js.events().stream().filter(e -> broadcast(e, channel)).toList();
            if (got.size() >= count || System.nanoTime() > deadline) {
                assertThat(got).hasSizeGreaterThanOrEqualTo(count);
                return got;
            }
            Thread.sleep(20);
        }
    }

    private RealtimeJsClient client(int replica, String vsn) {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(stack.wsUrl(replica), stack.tokens.anon(stack.projectId), vsn, Map.of());
        return js;
    }

    @Test
    void replayAtJoinServesHistoryOfAnotherReplicaAfterItsLastMemberLeft() throws Exception {
        try (RealtimeJsClient sender = client(0, "2.0.0");
                RealtimeJsClient late = client(1, "2.0.0")) {
            sender.channel("hist", Map.of("broadcast", Map.of("ack", true)));
            sender.subscribeAndAwait("hist", T);
            long t0 = System.currentTimeMillis() - 1;
            for (int i = 1; i <= 3; i++) {
                assertThat(sender.sendBroadcast("hist", "note", Map.of("n", i))).isEqualTo("ok");
            }
            sender.unsubscribe("hist"); // no local member anywhere now: history must survive on both replicas
            Thread.sleep(300);

            late.channel(
                    "hist", Map.of("private", true, "broadcast", Map.of("replay", Map.of("since", t0, "limit", 2))));
            late.onBroadcast("hist", "*");
            late.subscribeAndAwait("hist", T);
            List<JsonNode> replayed = awaitBroadcasts(late, "hist", 2);
            JsonNode first = replayed.get(0).path("payload");
            JsonNode second = replayed.get(1).path("payload");
            late.assertNoEvent(
                    0,
                    e -> broadcast(e, "hist")
                            && e.path("payload").path("payload").path("n").asInt() == 1,
                    Duration.ofMillis(300));
            assertThat(first.path("payload").path("n").asInt()).isEqualTo(2);
            assertThat(second.path("payload").path("n").asInt()).isEqualTo(3);
            assertThat(first.path("meta").path("replayed").asBoolean()).isTrue();
            assertThat(first.path("meta").path("id").asText()).hasSize(36);
            assertThat(second.path("meta").path("id").asText())
                    .isNotEqualTo(first.path("meta").path("id").asText());
        }
    }

    @Test
    void channelNamesOfAnyUtf8UpTo255BytesCrossReplicasIntact() throws Exception {
        String long255 = "é".repeat(120) + "x.>*" + "a".repeat(11); // 240 + 15 = 255 bytes
        assertThat(long255.getBytes(StandardCharsets.UTF_8)).hasSize(255);
        List<String> names = List.of("a.b c", ">", "*.*", "room > 1 * 2", "🚀 emoji.room", "ünïcødé/#?&=%", long255);
        try (RealtimeJsClient v1 = client(0, "1.0.0");
                RealtimeJsClient v2 = client(0, "2.0.0");
                RealtimeJsClient rx = client(1, "2.0.0")) {
            for (String name : names) {
                rx.channel(name);
                rx.onBroadcast(name, "*");
                rx.subscribeAndAwait(name, T);
                // realtime-js refuses binary pushes whose topic exceeds 255 bytes: the long name goes over 1.0.0
                RealtimeJsClient tx = ("realtime:" + name).getBytes(StandardCharsets.UTF_8).length > 255 ? v1 : v2;
                tx.channel(name);
                tx.subscribeAndAwait(name, T);
                tx.sendBroadcast(name, "ev", Map.of("name", name));
                JsonNode got = rx.awaitEvent(e -> broadcast(e, name), T).path("payload");
                assertThat(got.path("payload").path("name").asText()).isEqualTo(name);
            }
        }
    }

    private String sseUrl(int replica, String topic, String extra) {
        return "http://127.0.0.1:" + stack.wsPort(replica) + "/realtime/v1/sse?topic="
                + URLEncoder.encode(topic, StandardCharsets.UTF_8) + "&apikey=" + stack.tokens.anon(stack.projectId)
                + extra;
    }

    @Test
    void sseStreamsBroadcastsAndChangesAndResumesFromLastEventId() throws Exception {
        String bindings = "&postgres_changes="
                + URLEncoder.encode(
                        "[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"messages\"}]",
                        StandardCharsets.UTF_8);
        try (RealtimeJsClient sender = client(0, "2.0.0")) {
            sender.channel("sse room");
            sender.subscribeAndAwait("sse room", T);
            String lastId;
            try (SseStream sse = SseStream.open(sseUrl(1, "sse room", bindings), Map.of())) {
                assertThat(sse.status).isEqualTo(200);
                assertThat(sse.await(e -> e.event().equals("phx_reply"), T).data())
                        .contains("\"status\":\"ok\"");
                assertThat(sse.await(e -> e.event().equals("system"), T).data()).contains("Subscribed to PostgreSQL");
                sender.sendBroadcast("sse room", "hello", Map.of("n", 1));
                SseStream.Event b = sse.await(e -> e.event().equals("broadcast"), T);
                assertThat(b.id()).hasSize(36);
                JsonNode data = JSON.readTree(b.data());
                assertThat(data.path("event").asText()).isEqualTo("hello");
                assertThat(data.path("payload").path("n").asInt()).isEqualTo(1);
                lastId = b.id();
                stack.sql("INSERT INTO " + stack.table("messages") + "(body) VALUES ('via sse')");
                SseStream.Event change = sse.await(e -> e.event().equals("postgres_changes"), T);
                assertThat(change.id()).isNull();
                assertThat(JSON.readTree(change.data())
                                .path("data")
                                .path("record")
                                .path("body")
                                .asText())
                        .isEqualTo("via sse");
            }
            sender.sendBroadcast("sse room", "missed", Map.of("n", 2));
            sender.sendBroadcast("sse room", "missed", Map.of("n", 3));
            Thread.sleep(300);
            try (SseStream sse = SseStream.open(sseUrl(1, "sse room", ""), Map.of("Last-Event-ID", lastId))) {
                SseStream.Event r2 = sse.await(e -> e.event().equals("broadcast"), T);
                SseStream.Event r3 = sse.await(e -> e.event().equals("broadcast"), T);
                assertThat(JSON.readTree(r2.data()).path("payload").path("n").asInt())
                        .isEqualTo(2);
                assertThat(JSON.readTree(r3.data()).path("payload").path("n").asInt())
                        .isEqualTo(3);
                assertThat(JSON.readTree(r2.data())
                                .path("meta")
                                .path("replayed")
                                .asBoolean())
                        .isTrue();
                assertThat(r3.id()).isNotEqualTo(r2.id()).isNotEqualTo(lastId);
            }
            try (SseStream sse = SseStream.open(
                    sseUrl(0, "sse room", "&lastEventId=00000000-0000-7000-8000-000000000000"), Map.of())) {
                assertThat(sse.await(e -> e.event().equals("reset"), T).data()).contains("HistoryGap");
            }
        }
        SseStream bad = SseStream.open(sseUrl(0, "x", "").replace("apikey=", "apikey=x"), Map.of());
        assertThat(bad.status).isEqualTo(401);
        assertThat(JSON.readTree(bad.body).path("error").asText()).isNotBlank();
    }

    @Test
    void aClientThatStopsReadingIsDroppedWithoutDelayingOthers() throws Exception {
        String topic = "realtime:firehose";
        try (Socket slow = new Socket();
                RealtimeJsClient reader = client(1, "2.0.0");
                RealtimeJsClient sender = client(0, "2.0.0")) {
            slow.setReceiveBufferSize(4096);
            slow.connect(new InetSocketAddress("127.0.0.1", stack.wsPort(1)));
            OutputStream out = slow.getOutputStream();
            out.write(("GET /realtime/v1/websocket?vsn=1.0.0&apikey=" + stack.tokens.anon(stack.projectId)
                            + " HTTP/1.1\r\n"
                            + "Host: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            InputStream in = slow.getInputStream();
            readUntilBlankLine(in);
            writeMaskedText(
                    out,
                    "{\"topic\":\"" + topic
                            + "\",\"event\":\"phx_join\",\"payload\":{},\"ref\":\"1\",\"join_ref\":\"1\"}");
            Thread.sleep(300); // joined; from now on the socket is never read

            reader.channel("firehose");
            reader.onBroadcast("firehose", "*");
            reader.subscribeAndAwait("firehose", T);
            sender.channel("firehose");
            sender.subscribeAndAwait("firehose", T);
            String pad = "x".repeat(200_000); // 30 x 200 KB: more than the kernel's 4 MiB send buffer plus ours
            int n = 30;
            long sentLast = 0;
            for (int i = 0; i < n; i++) {
                sender.sendBroadcast("firehose", "blob", Map.of("i", i, "pad", pad));
                sentLast = System.nanoTime();
                Thread.sleep(20); // stay under the sender's 100 events/s
            }
            int last = n - 1;
            reader.awaitEvent(
                    e -> broadcast(e, "firehose")
                            && e.path("payload").path("payload").path("i").asInt() == last,
                    T);
            long lagMs = (System.nanoTime() - sentLast) / 1_000_000;
            long received = reader.events().stream()
                    .filter(e -> broadcast(e, "firehose"))
                    .count();
            assertThat(received).isEqualTo(n);
            assertThat(lagMs)
                    .as("delivery of the last message to the reading client")
                    .isLessThan(3000);
            assertThat(metrics(1)).containsPattern("aura_ws_slow_clients_dropped_total(\\{[^}]*\\})? [1-9]");
        }
    }

    private static String metrics(int replica) throws Exception {
        var http = java.net.http.HttpClient.newHttpClient();
        return http.send(
                        java.net.http.HttpRequest.newBuilder(
                                        java.net.URI.create("http://127.0.0.1:" + stack.wsPort(replica) + "/metrics"))
                                .build(),
                        java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
    }

    private static void readUntilBlankLine(InputStream in) throws Exception {
        List<Integer> tail = new ArrayList<>();
        while (true) {
            int b = in.read();
            if (b < 0) {
                throw new AssertionError("handshake failed");
            }
            tail.add(b);
            int s = tail.size();
            if (s >= 4
                    && tail.get(s - 4) == '\r'
                    && tail.get(s - 3) == '\n'
                    && tail.get(s - 2) == '\r'
                    && tail.get(s - 1) == '\n') {
                return;
            }
        }
    }

    private static void writeMaskedText(OutputStream out, String text) throws Exception {
        byte[] p = text.getBytes(StandardCharsets.UTF_8);
        byte[] mask = {1, 2, 3, 4};
        java.io.ByteArrayOutputStream f = new java.io.ByteArrayOutputStream();
        f.write(0x81);
        if (p.length < 126) {
            f.write(0x80 | p.length);
        } else {
            f.write(0x80 | 126);
            f.write(p.length >>> 8);
            f.write(p.length & 0xFF);
        }
        f.write(mask);
        for (int i = 0; i < p.length; i++) {
            f.write(p[i] ^ mask[i % 4]);
        }
        out.write(f.toByteArray());
        out.flush();
    }
}
