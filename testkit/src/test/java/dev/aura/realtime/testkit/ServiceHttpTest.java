package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ServiceHttpTest {
    private final AtomicReference<String> health = new AtomicReference<>("{\"cdc_active\": false}");
    private HttpServer server;

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/health", ex -> respond(ex, health.get()));
        server.createContext(
                "/metrics",
                ex -> respond(
                        ex,
                        "# HELP aura_x_total x\n"
                                + "aura_x_total{kind=\"a\"} 2.0\n"
                                + "aura_x_total{kind=\"b\"} 3.0\n"
                                + "aura_x_total_other 100.0\n"));
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private static void respond(com.sun.net.httpserver.HttpExchange ex, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(200, bytes.length);
        ex.getResponseBody().write(bytes);
        ex.close();
    }

    @Test
    void aMetricIsTheSumOfItsTagSetsAndAnAbsentOneIsZero() {
        ServiceHttp http = new ServiceHttp(server.getAddress().getPort());
        assertThat(http.metric("aura_x_total")).isEqualTo(5.0);
        assertThat(http.metric("aura_absent_total")).isZero();
    }

    @Test
    void awaitHealthReturnsOnceTheBodyChangesIgnoringSpaces() {
        ServiceHttp http = new ServiceHttp(server.getAddress().getPort());
        Thread.ofPlatform().start(() -> {
            http.awaitHealth("\"cdc_active\":false", Duration.ofSeconds(5), null);
            health.set("{\"cdc_active\": true, \"reason\": null}");
        });
        assertThat(http.awaitHealth("\"cdc_active\":true", Duration.ofSeconds(5), null))
                .contains("\"reason\": null");
        assertThat(http.awaitHealth(h -> h.path("cdc_active").asBoolean(), Duration.ofSeconds(5), null)
                        .path("reason")
                        .isNull())
                .isTrue();
    }

    @Test
    void aServiceThatNeverAnswersFailsTheAwaitWithTheLastAnswer() {
        ServiceHttp nobody = new ServiceHttp(Ports.free());
        assertThat(nobody.health()).startsWith("unreachable: ");
        assertThat(nobody.healthJson().isMissingNode()).isTrue();
        assertThatThrownBy(() -> nobody.awaitHealth("\"status\":\"ok\"", Duration.ofMillis(300), null))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("never contained \"status\":\"ok\"")
                .hasMessageContaining("last: unreachable: ");
    }
}
