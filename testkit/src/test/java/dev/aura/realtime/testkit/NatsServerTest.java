package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class NatsServerTest {

    @Test
    void restartsOnTheSamePort() throws Exception {
        try (NatsServer nats = NatsServer.start()) {
            int port = nats.port();
            assertRoundTrip(nats);

            nats.stop();
            assertThat(nats.isRunning()).isFalse();
            nats.restart();
            assertThat(nats.port()).isEqualTo(port);
            assertRoundTrip(nats);

            nats.kill();
            nats.restart();
            assertRoundTrip(nats);
        }
    }

    private static void assertRoundTrip(NatsServer nats) throws Exception {
        Options options = new Options.Builder()
                .server(nats.url())
                .connectionTimeout(Duration.ofSeconds(5))
                .build();
        try (Connection connection = Nats.connect(options)) {
            var subscription = connection.subscribe("testkit.ping");
            connection.publish("testkit.ping", "hi".getBytes());
            assertThat(subscription.nextMessage(Duration.ofSeconds(5)).getData())
                    .isEqualTo("hi".getBytes());
            assertThat(connection.getServerInfo().isJetStreamAvailable()).isTrue();
        }
    }
}
