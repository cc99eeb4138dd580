package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The SSE endpoint through the whole pipeline of {@link FrontInitializer}, in memory. */
class SseStreamTest {
    private final ChannelHarness h = new ChannelHarness();
    private final TransportContext context = h.transport();
    private EmbeddedChannel socket;

    @AfterEach
    void close() {
        if (socket != null) {
            socket.finishAndReleaseAll();
        }
    }

    /** Opens a socket, sends the request head and returns what the server wrote (HTTP encoded). */
    private String open(String pathAndQuery, String... headers) {
        socket = new EmbeddedChannel(new FrontInitializer(context, new AtomicBoolean()));
        StringBuilder req = new StringBuilder("GET " + pathAndQuery + " HTTP/1.1\r\nHost: test\r\n");
        for (String header : headers) {
            req.append(header).append("\r\n");
        }
        socket.writeInbound(Unpooled.copiedBuffer(req.append("\r\n"), StandardCharsets.UTF_8));
        return written();
    }

    private String written() {
        socket.runPendingTasks();
        StringBuilder out = new StringBuilder();
        for (ByteBuf b = socket.readOutbound(); b != null; b = socket.readOutbound()) {
            out.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        return out.toString();
    }

    private String streamOf(String topic) {
        return "/realtime/v1/sse?topic=" + topic + "&apikey=" + h.token(Duration.ofHours(1));
    }

    private void broadcast(String channel, String id, int n) {
        h.fanout.onBroadcast(
                FrontFixture.PROJECT,
                channel,
                new UserBroadcast("note", ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8), true, id));
    }

    @Test
    void theStreamJoinsTheChannelAndCarriesBroadcastsWithTheirIds() {
        String head = open(streamOf("room"));
        assertThat(head)
                .startsWith("HTTP/1.1 200 OK\r\n")
                .contains("content-type: text/event-stream; charset=utf-8")
                .contains("transfer-encoding: chunked")
                .contains("event: phx_reply\ndata: {\"status\":\"ok\",\"response\":{\"postgres_changes\":[]}}\n\n");

        broadcast("room", "id-1", 1);

        assertThat(written())
                .contains("id: id-1\nevent: broadcast\ndata: {\"type\":\"broadcast\",\"event\":\"note\","
                        + "\"payload\":{\"n\":1},\"meta\":{\"id\":\"id-1\"}}\n\n");
        assertThat(h.sessions.size()).isEqualTo(1);
    }

    @Test
    void lastEventIdReplaysWhatWasMissedExactlyOnce() {
        broadcast("room", "id-1", 1);
        broadcast("room", "id-2", 2);
        broadcast("room", "id-3", 3);

        String stream = open(streamOf("room"), "Last-Event-ID: id-1");

        assertThat(stream).doesNotContain("id: id-1\n");
        int reply = stream.indexOf("event: phx_reply");
        int second = stream.indexOf("id: id-2\nevent: broadcast\ndata: ");
        int third = stream.indexOf("id: id-3\nevent: broadcast\ndata: ");
        assertThat(reply).isNotNegative().isLessThan(second);
        assertThat(second).isLessThan(third);
        assertThat(stream).contains("\"meta\":{\"replayed\":true,\"id\":\"id-3\"}");
        broadcast("room", "id-3", 3); // a late live copy of a replayed message
        assertThat(written()).doesNotContain("id-3");
    }

    @Test
    void aLastEventIdNoLongerInHistoryIsReportedAsAReset() {
        String stream = open(streamOf("room") + "&lastEventId=gone");
        assertThat(stream)
                .contains("event: reset\ndata: {\"reason\":\"HistoryGap: Last-Event-ID is no longer in the channel's"
                        + " history\",\"last_event_id\":\"gone\"}\n\n");
    }

    @Test
    void aMissingApiKeyIsRefusedBeforeTheStreamStarts() {
        String response = open("/realtime/v1/sse?topic=room");
        assertThat(response).startsWith("HTTP/1.1 401 Unauthorized\r\n").endsWith("{\"error\":\"API key is missing\"}");
        assertThat(h.sessions.size()).isZero();
    }

    @Test
    void closingTheChannelEndsTheStream() {
        open(streamOf("room"));
        h.sessions.snapshot().get(0).disconnect("Server requested disconnect");

        String end = written();

        assertThat(end)
                .contains("event: system\ndata: {\"extension\":\"system\",\"status\":\"error\","
                        + "\"message\":\"Server requested disconnect\",\"channel\":\"room\"}\n\n");
        assertThat(end).contains("event: phx_close\ndata: {}\n\n").endsWith("0\r\n\r\n");
        assertThat(socket.isOpen()).isFalse();
    }
}
