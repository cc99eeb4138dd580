package dev.aura.realtime.e2e.privacy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Binary broadcasts end to end (docs/protocol.md, "Binary messages") with the unmodified
 * realtime-js 2.119.2 and both jars: {@code realtime.send_binary()} stores the bytes in
 * {@code binary_payload}; the slot delivers them to vsn 2.0.0 members as a binary frame (realtime-js
 * hands the callback an {@code ArrayBuffer} with the exact bytes) and to vsn 1.0.0 members not at
 * all, as Supabase; a later join replays them; {@code httpSend} with an {@code ArrayBuffer} body
 * (octet-stream) reaches members as binary, and with {@code persist} is stored and replayed, as is
 * a socket {@code send} of an {@code ArrayBuffer} with {@code persist}. Both ways of reading the
 * slot ({@code CDC_SOURCE}).
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@ValueSource(strings = {"stream", "poll"})
class BinaryBroadcastE2EIT {
    private static final Duration T = Duration.ofSeconds(20);

    @Parameter
    String source;
    /** Not UTF-8, with a NUL, 0xff and 0x80: only a byte-exact path keeps these. */
    private static final byte[] BYTES = {0, (byte) 0xff, 0x10, (byte) 0x80, 0x0a, 'a', (byte) 0xc3, 0x28};

    private E2eStack stack;
    private String rt;

    @BeforeEach
    void start() {
        stack = E2eStack.start(PostgresServer.shared(), NatsServer.shared(), 1, Map.of("CDC_SOURCE", source));
        rt = stack.realtimeSchema();
        stack.awaitRealtimeSchema(T);
        stack.sql(
                "CREATE POLICY bin_reads ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                        + ".topic() LIKE 'bin:%')",
                "CREATE POLICY bin_writes ON " + rt + ".messages FOR INSERT TO aura_authenticated WITH CHECK (" + rt
                        + ".topic() LIKE 'bin:%')");
    }

    @AfterEach
    void stop() {
        stack.close();
    }

    private RealtimeJsClient member(String vsn, String channel, Map<String, ?> config) {
        Map<String, Object> claims = stack.tokens.claims("authenticated", stack.projectId);
        claims.put("sub", UUID.randomUUID().toString());
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(
                stack.wsUrl(0),
                stack.tokens.anon(stack.projectId),
                vsn,
                Map.of("accessToken", stack.tokens.withClaims(claims)));
        js.channel(channel, config);
        js.onBroadcast(channel, "*");
        js.subscribeAndAwait(channel, T);
        return js;
    }

    private static Predicate<JsonNode> broadcast(String channel, String event) {
        return e -> "broadcast".equals(e.path("type").asText())
                && channel.equals(e.path("channel").asText())
                && event.equals(e.path("payload").path("event").asText());
    }

    private static byte[] binary(JsonNode broadcastEvent) {
        JsonNode payload = broadcastEvent.path("payload").path("payload");
        assertThat(payload.has("$binary"))
                .as("payload is an ArrayBuffer: %s", broadcastEvent)
                .isTrue();
        return Base64.getDecoder().decode(payload.path("$binary").asText());
    }

    private static String hex(byte[] bytes) {
        return "'\\x" + java.util.HexFormat.of().formatHex(bytes) + "'::bytea";
    }

    @Test
    void sendBinaryReachesVsn2AsExactBytesSkipsVsn1AndIsReplayed() {
        String ch = "bin:room";
        try (RealtimeJsClient v2 = member("2.0.0", ch, Map.of("private", true));
                RealtimeJsClient v1 = member("1.0.0", ch, Map.of("private", true))) {
            stack.sql(
                    "SELECT " + rt + ".send_binary(" + hex(BYTES) + ", 'blob', '" + ch + "')",
                    "SELECT " + rt + ".send('{\"n\": 1}', 'after', '" + ch + "')");

            JsonNode blob = v2.awaitEvent(broadcast(ch, "blob"), T);
            assertThat(binary(blob)).isEqualTo(BYTES);
            assertThat(blob.path("payload").path("meta").path("id").asText()).hasSize(36);
            v2.awaitEvent(broadcast(ch, "after"), T);

            // vsn 1.0.0 has no form for binary: the JSON message after it arrives, the binary one never
            v1.awaitEvent(broadcast(ch, "after"), T);
            assertThat(v1.events().stream().filter(broadcast(ch, "blob"))).isEmpty();
            String storedId = stack.pg.queryOne("SELECT id FROM " + rt + ".messages WHERE event = 'blob'");
            assertThat(blob.path("payload").path("meta").path("id").asText()).isEqualTo(storedId);
            assertThat(stack.pg.queryOne(
                            "SELECT encode(binary_payload, 'hex') FROM " + rt + ".messages WHERE event = 'blob'"))
                    .isEqualTo(java.util.HexFormat.of().formatHex(BYTES));
        }

        Map<String, ?> replay = Map.of("private", true, "broadcast", Map.of("replay", Map.of("since", 0, "limit", 10)));
        try (RealtimeJsClient late = member("2.0.0", ch, replay)) {
            List<JsonNode> got = Awaitility.await()
                    .atMost(T)
                    .pollInterval(Duration.ofMillis(20))
                    .until(
                            () -> late.events().stream()
                                    .filter(e ->
                                            "broadcast".equals(e.path("type").asText()))
                                    .toList(),
                            l -> l.size() >= 2);
            assertThat(got.get(0).path("payload").path("event").asText()).isEqualTo("blob");
            assertThat(binary(got.get(0))).isEqualTo(BYTES);
            assertThat(got.get(0).path("payload").path("meta").path("replayed").asBoolean())
                    .isTrue();
            assertThat(got.get(1).path("payload").path("event").asText()).isEqualTo("after");
        }
        try (RealtimeJsClient lateV1 = member("1.0.0", ch, replay)) {
            lateV1.awaitEvent(broadcast(ch, "after"), T);
            assertThat(lateV1.events().stream().filter(broadcast(ch, "blob"))).isEmpty();
        }
    }

    @Test
    void httpSendWithAnArrayBufferIsABinaryBroadcastAndPersistedOneIsReplayed() {
        String pub = "bin:public";
        String priv = "bin:stored";
        Map<String, String> bytes = Map.of("$binary", Base64.getEncoder().encodeToString(BYTES));
        try (RealtimeJsClient rx = member("2.0.0", pub, Map.of());
                RealtimeJsClient tx = member("2.0.0", priv, Map.of("private", true))) {
            tx.channel(pub);
            JsonNode sent = tx.httpSend(pub, "rest-blob", bytes);
            assertThat(sent.path("success").asBoolean())
                    .as("httpSend: %s", sent)
                    .isTrue();
            assertThat(binary(rx.awaitEvent(broadcast(pub, "rest-blob"), T))).isEqualTo(BYTES);

            JsonNode stored = tx.httpSendPersisted(priv, "kept-blob", bytes);
            assertThat(stored.path("success").asBoolean())
                    .as("httpSend persist: %s", stored)
                    .isTrue();
            // stored, then delivered from the database as a binary broadcast
            assertThat(binary(tx.awaitEvent(broadcast(priv, "kept-blob"), T))).isEqualTo(BYTES);

            // a vsn 2.0.0 binary push (kind 3, encoding 0) with metadata {"persist": true}
            assertThat(tx.sendPersisted(priv, "sock-blob", bytes)).isEqualTo("ok");
            assertThat(binary(tx.awaitEvent(broadcast(priv, "sock-blob"), T))).isEqualTo(BYTES);
        }
        Awaitility.await()
                .atMost(T)
                .until(() -> stack.pg
                        .queryOne("SELECT count(*) FROM " + rt + ".messages WHERE event = 'kept-blob'"
                                + " AND binary_payload = " + hex(BYTES) + " AND payload IS NULL")
                        .equals("1"));
        Map<String, ?> replay = Map.of("private", true, "broadcast", Map.of("replay", Map.of("since", 0, "limit", 10)));
        try (RealtimeJsClient late = member("2.0.0", priv, replay)) {
            JsonNode got = late.awaitEvent(broadcast(priv, "kept-blob"), T);
            assertThat(binary(got)).isEqualTo(BYTES);
            assertThat(got.path("payload").path("meta").path("replayed").asBoolean())
                    .isTrue();
            JsonNode sock = late.awaitEvent(broadcast(priv, "sock-blob"), T);
            assertThat(binary(sock)).isEqualTo(BYTES);
        }
    }
}
