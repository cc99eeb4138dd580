package dev.aura.realtime.front;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.front.testing.FrontFixture;
import dev.aura.realtime.front.testing.WsTestClient;
import dev.aura.realtime.testkit.NatsServer;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * ws-front over TLS with client certificates (the server verifies them), one replica logged in
 * with a password, the other with a creds file: both create their buckets, and a broadcast
 * crosses from one to the other.
 */
class NatsTlsIT {
    private static final Duration WAIT = Duration.ofSeconds(5);

    @Test
    void replicasWithPasswordAndCredsFileRelayOverTlsWithClientCertificates() throws Exception {
        HttpClient http = HttpClient.newHttpClient();
        try (NatsServer nats = NatsServer.startTls(true);
                FrontApp byPassword = FrontApp.start(FrontFixture.config(nats, "tls-password", Map.of()));
                FrontApp byCreds = FrontApp.start(FrontFixture.config(
                        nats,
                        "tls-creds",
                        Map.of( // blank is unset: the creds file replaces the password
                                "NATS_USER",
                                "",
                                "NATS_PASSWORD",
                                "",
                                "NATS_CREDS_FILE",
                                nats.credsEnv(NatsServer.User.WS_FRONT).get("NATS_CREDS_FILE"))));
                WsTestClient sender = new WsTestClient(http, FrontFixture.wsUrl(byPassword.port()));
                WsTestClient receiver = new WsTestClient(http, FrontFixture.wsUrl(byCreds.port()))) {
            assertThat(nats.url()).startsWith("tls://");
            join(sender);
            join(receiver);
            sender.send(
                    "[\"1\",\"2\",\"realtime:room\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"hi\",\"payload\":{\"n\":1}}]");
            WsTestClient.Received r = receiver.poll(WAIT);
            assertThat(r).as("the broadcast over TLS").isNotNull();
            assertThat(WsTestClient.latin1(r.bytes())).contains("hi").endsWith("{\"n\":1}");
        }
    }

    private static void join(WsTestClient c) throws InterruptedException {
        c.send("[\"1\",\"1\",\"realtime:room\",\"phx_join\",{\"config\":{}}]");
        WsTestClient.Received reply = c.poll(WAIT);
        assertThat(reply).isNotNull();
        assertThat(reply.text()).contains("phx_reply").contains("\"ok\"");
    }
}
