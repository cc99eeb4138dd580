package dev.aura.realtime.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ControlApiClientTest {
    /** What the fake control API received: method, raw path, apikey header, body. */
    private final List<String> requests = new CopyOnWriteArrayList<>();

    private final AtomicInteger status = new AtomicInteger(200);
    private HttpServer server;

    @BeforeEach
    void serve() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/", ex -> {
            requests.add(ex.getRequestMethod() + " " + ex.getRequestURI().getRawPath() + " "
                    + ex.getRequestHeaders().getFirst("apikey") + " "
                    + new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            byte[] body = "{\"error\":\"no\"}".getBytes(StandardCharsets.UTF_8);
            ex.sendResponseHeaders(status.get(), body.length);
            ex.getResponseBody().write(body);
            ex.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    @Test
    void aTableNameIsSentAsOnePathSegmentWithTheKeyAndTheFlag() {
        ControlApiClient api = new ControlApiClient(server.getAddress().getPort());
        api.enable("p-1", "My Table/ä", "key");
        api.disable("p-1", "t", "key");
        assertThat(requests)
                .containsExactly(
                        "PUT /v1/db/p-1/schema/tables/My%20Table%2F%C3%A4/realtime key {\"enabled\":true}",
                        "PUT /v1/db/p-1/schema/tables/t/realtime key {\"enabled\":false}");
    }

    @Test
    void aRefusalFailsWithItsStatusAndBodyUnlessTheRawCallIsUsed() {
        ControlApiClient api = new ControlApiClient(server.getAddress().getPort());
        status.set(422);
        assertThatThrownBy(() -> api.enable("p", "nokey", "key"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("422")
                .hasMessageContaining("{\"error\":\"no\"}");
        assertThat(api.putRealtime("p", "nokey", "{}", null).statusCode()).isEqualTo(422);
        assertThat(requests.get(1)).isEqualTo("PUT /v1/db/p/schema/tables/nokey/realtime null {}");
    }
}
