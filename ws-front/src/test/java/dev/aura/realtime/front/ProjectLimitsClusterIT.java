package dev.aura.realtime.front;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.testing.FrontCluster;
import dev.aura.realtime.front.testing.FrontFixture;
import dev.aura.realtime.front.testing.WsTestClient;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Per-project connection limit across two replicas on a real nats-server (with the product's
 * NATS permissions): each replica counts the other's connections from its usage reports, and a
 * connection over the limit is refused at the upgrade with HTTP 429 and Supabase's words.
 */
class ProjectLimitsClusterIT {
    @AutoClose
    private static FrontCluster cluster;

    private static FrontApp a;
    private static FrontApp b;

    @BeforeAll
    static void start() throws Exception {
        cluster = FrontCluster.start(Map.of(
                "WS_IO_THREADS", "1",
                "PROJECT_MAX_CONCURRENT_USERS", "2",
                "PROJECT_USAGE_INTERVAL_MS", "200"));
        a = cluster.replica("front-a");
        b = cluster.replica("front-b");
    }

    @AfterEach
    void closeClients() {
        cluster.closeClients();
    }

    /** The status line and body of a WebSocket upgrade request to {@code app} with the anon key. */
    private static String upgrade(FrontApp app) throws IOException {
        try (Socket s = new Socket("127.0.0.1", app.port())) {
            s.setSoTimeout(5000);
            OutputStream out = s.getOutputStream();
            out.write(("GET /realtime/v1/websocket?apikey=" + FrontFixture.anonKey() + "&vsn=2.0.0 HTTP/1.1\r\n"
                            + "Host: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = s.getInputStream();
            byte[] buf = new byte[4096];
            int n = in.read(buf);
            return new String(buf, 0, Math.max(n, 0), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aThirdConnectionOfTheProjectIsRefusedWith429OnEitherReplicaUntilOneCloses() throws Exception {
        WsTestClient onA = cluster.connect(a);
        WsTestClient onB = cluster.connect(b);
        awaitOpen(onA);
        awaitOpen(onB);
        // a knows b's connection once b's next usage report arrived (one interval, 200 ms)
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            String response = upgrade(a);
            assertThat(response).startsWith("HTTP/1.1 429");
            assertThat(response).contains(Reasons.TOO_MANY_USERS);
        });
        assertThat(upgrade(b)).startsWith("HTTP/1.1 429");
        onB.close();
        await().atMost(Duration.ofSeconds(10))
                .untilAsserted(() -> assertThat(upgrade(a)).startsWith("HTTP/1.1 101"));
    }

    private static void awaitOpen(WsTestClient c) {
        c.send("[null,\"1\",\"phoenix\",\"heartbeat\",{}]");
        await().atMost(Duration.ofSeconds(10)).until(() -> c.received() > 0);
    }
}
