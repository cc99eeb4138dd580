package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code config.broadcast.replication_ready: true} with the unmodified realtime-js 2.119.2
 * (docs/protocol.md, issue 24): the channel gets the {@code system} message realtime-js documents
 * ({@code extension: "system", status: "ok", message: "Replication connection established"})
 * while an active cdc-worker is heard from, and {@code status: "error"} after
 * {@code WS_REPLICATION_READY_TIMEOUT_MS} while the cdc-worker is stopped.
 */
class ReplicationReadyE2EIT {
    private static final Duration T = Duration.ofSeconds(20);
    private static final Map<String, Object> READY = Map.of("broadcast", Map.of("replication_ready", true));
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = new E2eStack(PostgresServer.shared(), NatsServer.shared());
        stack.startCdcWorker(Map.of(), List.of());
        stack.startWsFront(Map.of("WS_CDC_STATUS_TIMEOUT_MS", "6000", "WS_REPLICATION_READY_TIMEOUT_MS", "4000"));
        stack.createProject();
        stack.createEnabledTable("items", "(id int PRIMARY KEY, title text)");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static RealtimeJsClient client() {
        RealtimeJsClient js = RealtimeJsClient.start();
        js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId));
        return js;
    }

    private static boolean system(JsonNode e, String channel, String text) {
        return "system".equals(e.path("type").asText())
                && channel.equals(e.path("channel").asText())
                && e.path("payload").path("message").asText().contains(text);
    }

    private static void joinReady(RealtimeJsClient js, String channel, boolean withChanges) {
        js.channel(channel, READY);
        if (withChanges) {
            js.onPostgresChanges(channel, Map.of("event", "INSERT", "schema", "public", "table", "items"));
        }
        js.onSystem(channel);
        js.subscribeAndAwait(channel, T);
    }

    @Test
    void okWhileTheWorkerStreamsAndErrorWhenItIsStoppedThenOkAgain() {
        try (RealtimeJsClient js = client()) {
            joinReady(js, "ready", true);
            JsonNode ready = js.awaitEvent(e -> system(e, "ready", "Replication connection established"), T);
            assertThat(ready.get("payload").toString())
                    .isEqualTo("{\"extension\":\"system\",\"status\":\"ok\","
                            + "\"message\":\"Replication connection established\",\"channel\":\"ready\"}");
            // ok means changes flow: a row written now arrives
            stack.sql("INSERT INTO " + stack.table("items") + " VALUES (1, 'after ready')");
            js.awaitEvent(
                    e -> "postgres_changes".equals(e.path("type").asText())
                            && "after ready"
                                    .equals(e.path("payload")
                                            .path("new")
                                            .path("title")
                                            .asText()),
                    T);
            // a channel without postgres_changes is told too (Broadcast from Database uses the slot)
            joinReady(js, "broadcast-only", false);
            js.awaitEvent(e -> system(e, "broadcast-only", "Replication connection established"), T);

            stack.cdcWorker().stop();
            try {
                // ws-front notices the silence (WS_CDC_STATUS_TIMEOUT_MS) and tells postgres_changes channels
                js.awaitEvent(e -> system(e, "ready", "CdcWorkerSilent"), T);
                int mark = js.eventCount();
                joinReady(js, "stopped", false);
                JsonNode error = js.awaitEvent(mark, e -> system(e, "stopped", "ReplicationNotReady"), T);
                assertThat(error.at("/payload/status").asText()).isEqualTo("error");
                assertThat(error.at("/payload/extension").asText()).isEqualTo("system");
                assertThat(error.at("/payload/message").asText())
                        .startsWith("ReplicationNotReady: Replication connection not established within 4000 ms (")
                        .contains("CdcWorkerSilent");
                assertThat(js.events().stream().skip(mark))
                        .noneMatch(e -> system(e, "stopped", "Replication connection established"));
            } finally {
                stack.startCdcWorker(Map.of(), List.of());
            }
            joinReady(js, "restarted", false);
            js.awaitEvent(e -> system(e, "restarted", "Replication connection established"), T);
        }
    }
}
