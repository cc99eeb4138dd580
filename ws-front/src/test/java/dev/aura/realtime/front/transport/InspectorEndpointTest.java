package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.relay.HeldChanges;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /inspector/status} through the whole HTTP pipeline, in memory (docs/design.md D9): a
 * service_role key sees its own project's CDC status, counters and held changes; any other key
 * is refused, and no key sees another project's numbers.
 */
class InspectorEndpointTest {
    private static final String OTHER = "0d7c0a1b-2c6f-4a59-9d1d-3f0d7c0a1b2c";
    private final ChannelHarness h = new ChannelHarness();
    private final TransportContext context = h.transport();
    private final List<EmbeddedChannel> sockets = new ArrayList<>();

    @AfterEach
    void close() {
        sockets.forEach(EmbeddedChannel::finishAndReleaseAll);
    }

    private record Response(int status, String head, String body) {
        JsonNode json() {
            try {
                return WireJson.mapper().readTree(body);
            } catch (IOException e) {
                throw new AssertionError(body, e);
            }
        }
    }

    private Response get(String method, String... headers) {
        EmbeddedChannel socket = new EmbeddedChannel(new FrontInitializer(context, new AtomicBoolean()));
        sockets.add(socket);
        StringBuilder head = new StringBuilder(method + " /inspector/status HTTP/1.1\r\nHost: test\r\n");
        for (String header : headers) {
            head.append(header).append("\r\n");
        }
        head.append("Content-Length: 0\r\n\r\n");
        socket.writeInbound(Unpooled.wrappedBuffer(head.toString().getBytes(StandardCharsets.UTF_8)));
        socket.runPendingTasks();
        StringBuilder out = new StringBuilder();
        for (ByteBuf b = socket.readOutbound(); b != null; b = socket.readOutbound()) {
            out.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        String text = out.toString();
        int split = text.indexOf("\r\n\r\n");
        assertThat(split).as("an HTTP answer: " + text).isPositive();
        return new Response(
                Integer.parseInt(text.substring(9, 12)),
                text.substring(0, split).toLowerCase(),
                text.substring(split + 4));
    }

    @Test
    void aServiceKeySeesItsProjectsCdcStatusCountersAndHeldChanges() {
        h.cdc.onStatus(new CdcStatus("cdc-1", true, null, null, null, 0, 4096L));
        h.held = new HeldChanges.Snapshot(new HeldChanges.Held(3, 900), new HeldChanges.Held(1, 200), true);
        ProjectQuotas.Permit permit = h.quotas.admitConnection(FrontFixture.PROJECT);

        Response r = get("GET", "apikey: " + FrontFixture.TOKENS.serviceRole(FrontFixture.PROJECT));

        assertThat(r.status()).as(r.body()).isEqualTo(200);
        assertThat(r.head()).contains("cache-control: no-store").doesNotContain("access-control-allow-origin");
        JsonNode s = r.json();
        assertThat(s.path("project").asText()).isEqualTo(FrontFixture.PROJECT);
        assertThat(s.path("cdc").path("cdc_active").asBoolean()).isTrue();
        assertThat(s.path("cdc").path("slot_lag_bytes").asLong()).isEqualTo(4096);
        assertThat(s.path("usage").path("connections").path("total").asInt()).isEqualTo(1);
        assertThat(s.path("quarantine").path("changes").asLong()).isEqualTo(3);
        assertThat(s.path("late_lane").path("bytes").asLong()).isEqualTo(200);
        permit.release();
    }

    @Test
    void refusalsAreCountedPerProjectAndShown() {
        for (int i = 0; i < 3; i++) {
            h.quotas.admitConnection(FrontFixture.PROJECT);
        }
        h.overrides.rows.put(
                FrontFixture.PROJECT,
                new ProjectLimits(3, null, null, null, null, null, null, null, null, null, null, null, null));
        assertThat(h.quotas.admitConnection(FrontFixture.PROJECT)).isNull();

        JsonNode s = get("GET", "apikey: " + FrontFixture.TOKENS.serviceRole(FrontFixture.PROJECT))
                .json();
        assertThat(s.path("usage").path("refused_here").path("connections").asLong())
                .isEqualTo(1);
        assertThat(s.path("usage").path("connections").path("here").asInt()).isEqualTo(3);
        JsonNode other =
                get("GET", "apikey: " + FrontFixture.TOKENS.serviceRole(OTHER)).json();
        assertThat(other.path("project").asText()).isEqualTo(OTHER);
        assertThat(other.path("usage").path("connections").path("total").asInt())
                .isZero();
        assertThat(other.path("usage").path("refused_here").path("connections").asLong())
                .isZero();
    }

    @Test
    void anyOtherKeyIsRefusedWithoutTheStatus() {
        Response none = get("GET");
        assertThat(none.status()).isEqualTo(401);
        Response anon = get("GET", "apikey: " + FrontFixture.TOKENS.anon(FrontFixture.PROJECT));
        assertThat(anon.status()).isEqualTo(403);
        assertThat(anon.json().path("error").asText()).isEqualTo(InspectorEndpoint.NOT_SERVICE_ROLE);
        Response user = get("GET", "apikey: " + FrontFixture.TOKENS.authenticated(FrontFixture.PROJECT, "u-1"));
        assertThat(user.status()).isEqualTo(403);
        assertThat(get("GET", "apikey: nonsense").status()).isEqualTo(401);
        assertThat(get("POST", "apikey: " + FrontFixture.TOKENS.serviceRole(FrontFixture.PROJECT))
                        .status())
                .isEqualTo(405);
    }

    @Test
    void thePageAndItsScriptAreServedWithTheDemosSupabaseJs() {
        EmbeddedChannel socket = new EmbeddedChannel(new FrontInitializer(context, new AtomicBoolean()));
        sockets.add(socket);
        socket.writeInbound(Unpooled.wrappedBuffer(
                "GET /inspector HTTP/1.1\r\nHost: test\r\n\r\n".getBytes(StandardCharsets.UTF_8)));
        socket.runPendingTasks();
        StringBuilder out = new StringBuilder();
        for (ByteBuf b = socket.readOutbound(); b != null; b = socket.readOutbound()) {
            out.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        assertThat(out.toString())
                .startsWith("HTTP/1.1 200")
                .contains("text/html")
                .contains("content-security-policy: default-src 'none'; script-src 'self';")
                .contains("frame-ancestors 'none'")
                .contains("x-frame-options: DENY")
                .contains("/demo/supabase.js")
                .contains("/inspector/inspector.js")
                .contains("/inspector/inspector.css");
    }
}
