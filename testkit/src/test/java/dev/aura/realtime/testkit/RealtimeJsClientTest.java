package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RealtimeJsClientTest {

    @Test
    void driverAnswersCommandsAndReportsSocketFailures() {
        try (RealtimeJsClient client = RealtimeJsClient.start()) {
            assertThat(client.isConnected()).isFalse();
            assertThatThrownBy(() -> client.call("noSuchCommand", Map.of()))
                    .isInstanceOf(RealtimeJsClient.DriverException.class)
                    .hasMessageContaining("unknown command");

            // Nothing listens on this port: realtime-js must report the failed socket and the channel error.
            int closedPort = Ports.free();
            client.connect(
                    "ws://127.0.0.1:" + closedPort + "/realtime/v1",
                    "not-a-real-key",
                    "1.0.0",
                    Map.of("timeout", 2000));
            client.channel("room-1");
            client.onBroadcast("room-1", "*");
            client.subscribe("room-1");
            client.awaitEvent(
                    e -> "socket".equals(e.path("type").asText())
                            && "error".equals(e.path("event").asText()),
                    Duration.ofSeconds(10));
            client.awaitStatus("room-1", "CHANNEL_ERROR", Duration.ofSeconds(10));
        }
    }
}
