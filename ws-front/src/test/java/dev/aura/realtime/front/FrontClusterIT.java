package dev.aura.realtime.front;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.testing.FrontCluster;
import dev.aura.realtime.front.testing.FrontFixture;
import dev.aura.realtime.front.testing.WsTestClient;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import io.nats.client.impl.Headers;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Two ws-front replicas on one real nats-server, driven by raw WebSocket clients. */
class FrontClusterIT {
    private static final Duration WAIT = Duration.ofSeconds(5);

    @AutoClose
    private static FrontCluster cluster;

    private static FrontApp a;
    private static FrontApp b;
    private static final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper mapper = WireJson.mapper();

    @BeforeAll
    static void start() throws Exception {
        cluster = FrontCluster.start(Map.of());
        a = cluster.replica("front-a");
        b = cluster.replica("front-b");
    }

    private JsonNode nextJson(WsTestClient c) throws Exception {
        WsTestClient.Received r = c.poll(WAIT);
        assertThat(r).as("a message within " + WAIT).isNotNull();
        assertThat(r.binary()).as("text frame").isFalse();
        return mapper.readTree(r.text());
    }

    private JsonNode joinOk(WsTestClient c, String topic, String config) throws Exception {
        c.send("[\"1\",\"1\",\"" + topic + "\",\"phx_join\",{\"config\":" + config + "}]");
        JsonNode reply = nextJson(c);
        assertThat(reply.get(3).asText()).isEqualTo("phx_reply");
        assertThat(reply.get(4).get("status").asText()).as(reply.toString()).isEqualTo("ok");
        return reply;
    }

    @Test
    void broadcastCrossesReplicasExactlyOnceAndIsNotEchoed() throws Exception {
        try {
            WsTestClient a1 = cluster.connect(a);
            WsTestClient a2 = cluster.connect(a);
            WsTestClient b1 = cluster.connect(b);
            joinOk(a1, "realtime:room", "{\"broadcast\":{\"self\":false,\"ack\":true}}");
            joinOk(a2, "realtime:room", "{}");
            joinOk(b1, "realtime:room", "{}");
            a1.send(
                    "[\"1\",\"2\",\"realtime:room\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"hi\",\"payload\":{\"n\":1}}]");
            JsonNode ack = nextJson(a1);
            assertThat(ack.get(1).asText()).isEqualTo("2");
            assertThat(ack.get(4).get("status").asText()).isEqualTo("ok");
            for (WsTestClient receiver : List.of(a2, b1)) {
                WsTestClient.Received r = receiver.poll(WAIT);
                assertThat(r).isNotNull();
                assertThat(r.binary()).isTrue();
                assertThat(r.bytes()[0]).isEqualTo((byte) 4);
                assertThat(WsTestClient.latin1(r.bytes()))
                        .contains("realtime:room")
                        .contains("hi")
                        .endsWith("{\"n\":1}");
            }
            Duration quiet = Duration.ofMillis(500);
            assertThat(a1.poll(quiet))
                    .as("sender does not get its own message (self=false)")
                    .isNull();
            assertThat(a2.poll(quiet))
                    .as("no second copy on the sender's replica")
                    .isNull();
            assertThat(b1.poll(quiet)).as("no second copy on the other replica").isNull();
        } finally {
            cluster.closeClients();
        }
    }

    @Test
    void changeEventReachesTheMatchingBindingWithItsId() throws Exception {
        try (Connection test = cluster.nats().connect()) {
            WsTestClient b2 = cluster.connect(b);
            JsonNode reply = joinOk(
                    b2,
                    "realtime:db",
                    "{\"postgres_changes\":[{\"event\":\"UPDATE\",\"schema\":\"public\",\"table\":\"other\"},"
                            + "{\"event\":\"*\",\"schema\":\"public\",\"table\":\"todos\"}]}");
            int id = reply.get(4)
                    .get("response")
                    .get("postgres_changes")
                    .get(1)
                    .get("id")
                    .asInt();
            JsonNode system = nextJson(b2);
            assertThat(system.get(3).asText()).isEqualTo("system");
            assertThat(system.get(4).get("message").asText())
                    .isEqualTo("Unable to validate subscription: CDC unavailable");

            KeyValue kv = test.keyValue(SubscriptionEntry.BUCKET);
            String subId = await().atMost(WAIT).until(() -> findSubId(kv, "todos"), s -> s != null);
            String data =
                    "{\"schema\":\"public\",\"table\":\"todos\",\"commit_timestamp\":\"2026-01-01T00:00:00Z\",\"type\":\"INSERT\","
                            + "\"columns\":[{\"name\":\"id\",\"type\":\"int8\"}],\"record\":{\"id\":9007199254740993},\"errors\":null}";
            ChangeEvent event = new ChangeEvent(
                    "0/16B3748:0", FrontFixture.PROJECT, "todos", "INSERT", List.of(subId), mapper.readTree(data));
            test.publish(
                    Subjects.changes(FrontFixture.PROJECT, "todos"),
                    new Headers().add(AuraHeaders.ORIGIN, "cdc-test"),
                    mapper.writeValueAsBytes(event));
            JsonNode push = nextJson(b2);
            assertThat(push.toString())
                    .isEqualTo("[null,null,\"realtime:db\",\"postgres_changes\",{\"ids\":[" + id + "],\"data\":" + data
                            + "}]");

            b2.close();
            await().atMost(WAIT).until(() -> findSubId(kv, "todos") == null);
        } finally {
            cluster.closeClients();
        }
    }

    private String findSubId(KeyValue kv, String table) throws Exception {
        for (String key : kv.keys()) {
            var entry = kv.get(key);
            if (entry == null || entry.getValue() == null) {
                continue;
            }
            SubscriptionEntry e = mapper.readValue(entry.getValue(), SubscriptionEntry.class);
            if (e.table().equals(table) && e.instance().equals("front-b")) {
                return e.subId();
            }
        }
        return null;
    }

    @Test
    void healthAndConnectErrors() throws Exception {
        HttpResponse<String> health = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.port() + "/health"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(mapper.readTree(health.body()).get("nats_connected").asBoolean())
                .isTrue();
        HttpResponse<String> metrics = http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.port() + "/metrics"))
                        .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(metrics.body()).contains("aura_ws_connections");
        // no apikey: the upgrade is accepted so that the client can read why (issue 40): a system
        // error message, the join's error reply and the close frame (1008) say it, /metrics counts it
        List<String> frames = new CopyOnWriteArrayList<>();
        CompletableFuture<String> closed = new CompletableFuture<>();
        java.net.http.WebSocket ws = http.newWebSocketBuilder()
                .buildAsync(
                        URI.create("ws://127.0.0.1:" + a.port() + "/realtime/v1/websocket?vsn=1.0.0"),
                        new java.net.http.WebSocket.Listener() {
                            @Override
                            public CompletionStage<?> onText(
                                    java.net.http.WebSocket w, CharSequence text, boolean last) {
                                frames.add(text.toString());
                                w.request(1);
                                return null;
                            }

                            @Override
                            public CompletionStage<?> onClose(java.net.http.WebSocket w, int code, String reason) {
                                closed.complete(code + " " + reason);
                                return null;
                            }
                        })
                .join();
        ws.sendText(
                "{\"topic\":\"realtime:room\",\"event\":\"phx_join\",\"payload\":{},\"ref\":\"1\",\"join_ref\":\"1\"}",
                true);
        assertThat(closed.get(10, TimeUnit.SECONDS)).isEqualTo("1008 API key is missing");
        assertThat(frames).hasSize(2);
        JsonNode system = mapper.readTree(frames.get(0));
        assertThat(system.path("event").asText()).isEqualTo("system");
        assertThat(system.at("/payload/status").asText()).isEqualTo("error");
        assertThat(system.at("/payload/message").asText()).isEqualTo("API key is missing");
        assertThat(system.at("/payload/channel").asText()).isEqualTo("room");
        JsonNode reply = mapper.readTree(frames.get(1));
        assertThat(reply.path("event").asText()).isEqualTo("phx_reply");
        assertThat(reply.at("/payload/status").asText()).isEqualTo("error");
        assertThat(reply.at("/payload/response/reason").asText()).isEqualTo("API key is missing");
        assertThat(http.send(
                                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + a.port() + "/metrics"))
                                        .build(),
                                HttpResponse.BodyHandlers.ofString())
                        .body())
                .contains("aura_ws_connections_refused_total{reason=\"ApiKeyMissing\"}");
    }
}
