package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RawWebSocket;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
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
    /**
     * How much later than a control reader on a replica configured alike a broadcast may reach the
     * reader beside the client that never reads (ms); queued behind it, the reader would wait for
     * WS_SLOW_CLIENT_TIMEOUT_MS (2 s).
     */
    private static final long MAX_EXTRA_LAG_MS = 1_500;

    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        stack.startCdcWorker(Map.of(), List.of());
        stack.startWsFront(Map.of());
        // replica 1 has small outbound buffers so a client that does not read overflows quickly;
        // replica 2, the same, serves the control reader of the slow-client test
        Map<String, String> smallBuffers = Map.of(
                "WS_WRITE_BUFFER_LOW_BYTES",
                "16384",
                "WS_WRITE_BUFFER_HIGH_BYTES",
                "65536",
                "WS_MAX_OUTBOUND_BYTES",
                "1048576",
                "WS_SLOW_CLIENT_TIMEOUT_MS",
                "2000",
                // one event loop: the reading client shares the loop of the one that never reads
                // (with several, they may land on different loops and a held loop goes unseen)
                "WS_IO_THREADS",
                "1");
        stack.startWsFront(smallBuffers);
        stack.startWsFront(smallBuffers);
        stack.createProject();
        stack.createEnabledTable("messages", "(id bigserial PRIMARY KEY, body text)");
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
    static List<JsonNode> awaitBroadcasts(RealtimeJsClient js, String channel, int count) {
        Waits.until(
                count + " broadcasts on " + channel,
                T,
                Duration.ofMillis(20),
                () -> broadcasts(js, channel).size() >= count,
                () -> "got " + broadcasts(js, channel));
        return broadcasts(js, channel);
    }

    private static List<JsonNode> broadcasts(RealtimeJsClient js, String channel) {
        return js.events().stream().filter(e -> broadcast(e, channel)).toList();
    }

    private RealtimeJsClient client(int replica, String vsn) {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(stack.wsUrl(replica), stack.tokens.anon(stack.projectId), vsn, Map.of());
        return js;
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
            // a second reader on replica 1 proves it has relayed both before the resume reads its history
            try (SseStream witness = SseStream.open(sseUrl(1, "sse room", ""), Map.of())) {
                witness.await(e -> e.event().equals("phx_reply"), T);
                sender.sendBroadcast("sse room", "missed", Map.of("n", 2));
                sender.sendBroadcast("sse room", "missed", Map.of("n", 3));
                witness.await(e -> e.event().equals("broadcast") && e.data().contains("\"n\":3"), T);
            }
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
                RealtimeJsClient control = client(2, "2.0.0");
                RealtimeJsClient sender = client(0, "2.0.0")) {
            slow.setReceiveBufferSize(4096);
            slow.connect(new InetSocketAddress("127.0.0.1", stack.wsPort(1)));
            OutputStream out = slow.getOutputStream();
            out.write(RawWebSocket.upgradeRequest(
                    "/realtime/v1/websocket?vsn=1.0.0&apikey=" + stack.tokens.anon(stack.projectId)));
            slow.setSoTimeout((int) T.toMillis());
            InputStream in = slow.getInputStream();
            RawWebSocket.readUntil(in, "\r\n\r\n"); // the handshake response
            out.write(RawWebSocket.maskedText("{\"topic\":\"" + topic
                    + "\",\"event\":\"phx_join\",\"payload\":{},\"ref\":\"1\",\"join_ref\":\"1\"}"));
            out.flush();
            RawWebSocket.readUntil(in, "phx_reply"); // joined; from now on the socket is never read

            for (RealtimeJsClient r : List.of(reader, control)) {
                r.channel("firehose");
                r.onBroadcast("firehose", "*");
                r.subscribeAndAwait("firehose", T);
            }
            sender.channel("firehose");
            sender.subscribeAndAwait("firehose", T);
            // 60 x 200 KB = 12 MB: far more than the kernel's socket buffers (a few MiB) plus our 1 MiB,
            // so the client that never reads overflows; paced at 2 MB/s so that the reading client
            // (realtime-js in node) keeps up with a 1 MiB / 2 s bound even on a loaded machine (at
            // 10 MB/s and 256 KiB it was itself dropped as slow once)
            String pad = "x".repeat(200_000);
            int n = 60;
            for (int i = 0; i < n; i++) {
                sender.sendBroadcast("firehose", "blob", Map.of("i", i, "pad", pad));
                Thread.sleep(100);
            }
            int last = n - 1;
            for (RealtimeJsClient r : List.of(reader, control)) {
                r.awaitEvent(
                        e -> broadcast(e, "firehose")
                                && e.path("payload").path("payload").path("i").asInt() == last,
                        T);
            }
            // Each message's lag to the reader beside the lazy client, over its lag to a control
            // reader on a replica configured alike: a loaded machine delays both (node, the JVMs,
            // NATS), a reader queued behind the lazy client waits for its slow-client timeout (2 s). Every
            // message counts, also those sent before the lazy client was dropped, which the last
            // message's lag alone never showed.
            long[] readerAt = arrivals(reader, n);
            long[] controlAt = arrivals(control, n);
            List<Long> extra = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                extra.add(readerAt[i] - controlAt[i]);
            }
            long worst = extra.stream().mapToLong(Long::longValue).max().orElseThrow();
            System.out.printf(
                    "each broadcast reached the reader beside the lazy client at most %d ms after the control"
                            + " reader (ms, by message: %s)%n",
                    worst, extra);
            assertThat(worst)
                    .as("how much later than the control a broadcast reached the reader beside the lazy client (ms)")
                    .isLessThan(MAX_EXTRA_LAG_MS);
            assertThat(metrics(1)).containsPattern("aura_ws_slow_clients_dropped_total(\\{[^}]*\\})? [1-9]");
        }
    }

    /** When each of the {@code n} firehose broadcasts, all received once, reached {@code r}'s callback (node's Date.now()). */
    private static long[] arrivals(RealtimeJsClient r, int n) {
        long[] at = new long[n];
        List<JsonNode> got =
                r.events().stream().filter(e -> broadcast(e, "firehose")).toList();
        assertThat(got).as("broadcasts received, each once").hasSize(n);
        got.forEach(e -> at[e.path("payload").path("payload").path("i").asInt()] =
                e.path("at").asLong());
        for (int i = 0; i < n; i++) {
            assertThat(at[i]).as("broadcast %d reached the client", i).isPositive();
        }
        return at;
    }

    private static String metrics(int replica) {
        return stack.http(stack.wsPort(replica)).metrics();
    }
}
