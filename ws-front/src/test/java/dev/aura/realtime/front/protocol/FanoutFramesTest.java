package dev.aura.realtime.front.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.common.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class FanoutFramesTest {
    private static final ByteBufAllocator ALLOC = UnpooledByteBufAllocator.DEFAULT;
    private final JsonFrames json = new JsonFrames(WireJson.mapper(), 100);
    private final FanoutFrames frames = new FanoutFrames(json, new BinaryFrames(json));

    private static UserBroadcast jsonBroadcast(String event, String payload, String id) {
        return new UserBroadcast(event, payload.getBytes(StandardCharsets.UTF_8), true, id);
    }

    private static String text(OutFrame frame) {
        try {
            return frame.payloadText();
        } finally {
            frame.release();
        }
    }

    @Test
    void broadcastIsAByteExactKind4FrameForVsn2() {
        OutFrame frame =
                frames.broadcast("realtime:t", jsonBroadcast("ev", "{\"a\":1}", "id1"), Framing.V2, false, ALLOC);
        ByteArrayOutputStream expected = new ByteArrayOutputStream();
        byte[] meta = "{\"id\":\"id1\"}".getBytes(StandardCharsets.UTF_8);
        expected.writeBytes(new byte[] {4, 10, 2, (byte) meta.length, 1});
        expected.writeBytes("realtime:t".getBytes(StandardCharsets.UTF_8));
        expected.writeBytes("ev".getBytes(StandardCharsets.UTF_8));
        expected.writeBytes(meta);
        expected.writeBytes("{\"a\":1}".getBytes(StandardCharsets.UTF_8));
        assertThat(frame.kind()).isEqualTo(OutFrame.Kind.BINARY);
        assertThat(ByteBufUtil.getBytes(frame.payload())).containsExactly(expected.toByteArray());
        frame.release();

        OutFrame noId = frames.broadcast(
                "realtime:t", new UserBroadcast("ev", new byte[] {7}, false, null), Framing.V2, false, ALLOC);
        assertThat(ByteBufUtil.getBytes(noId.payload()))
                .containsExactly(4, 10, 2, 0, 0, 'r', 'e', 'a', 'l', 't', 'i', 'm', 'e', ':', 't', 'e', 'v', 7);
        noId.release();
    }

    @Test
    void broadcastIsJsonForVsn1AndABinaryPayloadHasNoVsn1Form() {
        OutFrame frame = frames.broadcast("realtime:t", jsonBroadcast("ev", "[1]", "i"), Framing.V1, false, ALLOC);
        assertThat(frame.kind()).isEqualTo(OutFrame.Kind.TEXT);
        assertThat(text(frame))
                .isEqualTo(
                        "{\"topic\":\"realtime:t\",\"event\":\"broadcast\",\"payload\":{\"type\":\"broadcast\",\"event\":\"ev\",\"payload\":[1],\"meta\":{\"id\":\"i\"}},\"ref\":null}");
        assertThat(frames.broadcast(
                        "realtime:t", new UserBroadcast("ev", new byte[] {1}, false, null), Framing.V1, false, ALLOC))
                .isNull();
    }

    @Test
    void kind4FallsBackToTextWhenEventExceeds255Bytes() {
        String longEvent = "e".repeat(300);
        OutFrame frame = frames.broadcast("realtime:t", jsonBroadcast(longEvent, "1", null), Framing.V2, false, ALLOC);
        assertThat(frame.kind()).isEqualTo(OutFrame.Kind.TEXT);
        assertThat(text(frame))
                .startsWith("[null,null,\"realtime:t\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"eee");
    }

    @Test
    void aBinaryBroadcastWhoseHeaderHasNoBinaryFormReachesVsn2AsItsError() {
        String topic = "realtime:" + "x".repeat(255);
        OutFrame frame = frames.broadcast(
                topic, new UserBroadcast("ev", new byte[87_206], false, "m1"), Framing.V2, false, ALLOC);
        assertThat(frame.kind()).isEqualTo(OutFrame.Kind.TEXT);
        assertThat(text(frame))
                .endsWith("\"broadcast\",{\"type\":\"broadcast\",\"event\":\"ev\",\"payload\":{\"error\":\""
                        + FanoutFrames.NOT_FRAMED + "\",\"id\":\"m1\"},\"meta\":{\"id\":\"m1\"}}]");
    }

    @Test
    void aReplayedBroadcastSaysSoInItsMeta() {
        OutFrame frame = frames.broadcast("realtime:t", jsonBroadcast("ev", "{}", "i"), Framing.V1, true, ALLOC);
        assertThat(text(frame)).contains("\"meta\":{\"replayed\":true,\"id\":\"i\"}");
    }

    @Test
    void broadcastIsAnSseEventCarryingTheMessageIdAndThePushedPayload() {
        OutFrame frame =
                frames.broadcast("realtime:t", jsonBroadcast("hello", "{\"n\":1}", "id-1"), Framing.SSE, false, ALLOC);
        assertThat(frame.kind()).isEqualTo(OutFrame.Kind.SSE);
        assertThat(text(frame))
                .isEqualTo(
                        "id: id-1\nevent: broadcast\ndata: {\"type\":\"broadcast\",\"event\":\"hello\",\"payload\":{\"n\":1},"
                                + "\"meta\":{\"id\":\"id-1\"}}\n\n");
        OutFrame replayed =
                frames.broadcast("realtime:t", jsonBroadcast("hello", "{}", "id-1"), Framing.SSE, true, ALLOC);
        assertThat(text(replayed)).contains("\"meta\":{\"replayed\":true,\"id\":\"id-1\"}}\n\n");
        assertThat(frames.broadcast(
                        "realtime:t", new UserBroadcast("e", new byte[] {1}, false, "x"), Framing.SSE, false, ALLOC))
                .as("binary payloads have no SSE form")
                .isNull();
    }

    @Test
    void lineBreaksBetweenJsonTokensNeverSplitAnSseDataLine() {
        UserBroadcast pretty = jsonBroadcast("e", "{\r\n  \"a\": \"x\\ny\",\n  \"b\": 2\r}", "i");
        String event = text(frames.broadcast("realtime:t", pretty, Framing.SSE, false, ALLOC));
        assertThat(event.substring(0, event.length() - 2))
                .doesNotContain("\n\n")
                .doesNotContain("\r");
        assertThat(event.split("\n")).hasSize(3);
        assertThat(event).contains("\"payload\":{    \"a\": \"x\\ny\",   \"b\": 2 }");
        assertThat(new String(pretty.payload(), StandardCharsets.UTF_8))
                .as("the shared payload is not modified")
                .contains("\r\n");
    }

    @Test
    void postgresChangesShareOneDataSerialisationInEveryFraming() throws Exception {
        ByteBuf data = frames.changeData(JsonNodeFactory.instance.objectNode().put("type", "INSERT"));
        assertThat(text(frames.postgresChanges("realtime:db", "[7]", data, Framing.V2, ALLOC)))
                .isEqualTo(
                        "[null,null,\"realtime:db\",\"postgres_changes\",{\"ids\":[7],\"data\":{\"type\":\"INSERT\"}}]");
        assertThat(text(frames.postgresChanges("realtime:db", "[7]", data, Framing.V1, ALLOC)))
                .isEqualTo("{\"topic\":\"realtime:db\",\"event\":\"postgres_changes\",\"payload\":{\"ids\":[7],"
                        + "\"data\":{\"type\":\"INSERT\"}},\"ref\":null}");
        assertThat(text(frames.postgresChanges("realtime:db", "[7]", data, Framing.SSE, ALLOC)))
                .isEqualTo("event: postgres_changes\ndata: {\"ids\":[7],\"data\":{\"type\":\"INSERT\"}}\n\n");
        assertThat(data.refCnt()).isEqualTo(1);
        data.release();
    }

    @Test
    void eachRecipientGetsItsOwnViewOfTheSharedBytes() {
        OutFrame frame = frames.broadcast("realtime:t", jsonBroadcast("ev", "[1]", "i"), Framing.V1, false, ALLOC);
        ByteBuf a = frame.retainedWire();
        ByteBuf b = frame.retainedWire();
        a.skipBytes(3); // a partial write on one socket moves only that socket's view
        assertThat(b.readerIndex()).isEqualTo(frame.wire().readerIndex());
        assertThat(frame.refCnt()).isEqualTo(3);
        a.release();
        b.release();
        frame.release();
        assertThat(frame.refCnt()).isZero();
    }

    @Test
    void webSocketFramesAreCompleteUnmaskedServerFramesOfEveryLengthClass() {
        for (int length : new int[] {0, 125, 126, 65_535, 65_536, 200_000}) {
            OutFrame frame = WireFrames.webSocket(
                    OutFrame.Kind.TEXT,
                    ALLOC.buffer().writeBytes("x".repeat(length).getBytes()),
                    ALLOC);
            ByteBuf w = frame.wire();
            int header = length < 126 ? 2 : length <= 65_535 ? 4 : 10;
            assertThat((int) w.getUnsignedByte(0)).as("FIN, text").isEqualTo(0x81);
            assertThat(w.getUnsignedByte(1) & 0x80).as("no mask bit").isZero();
            long declared =
                    length < 126 ? w.getUnsignedByte(1) : length <= 65_535 ? w.getUnsignedShort(2) : w.getLong(2);
            assertThat(declared).isEqualTo(length);
            assertThat(w.readableBytes()).isEqualTo(header + length);
            assertThat(frame.payloadLength()).isEqualTo(length);
            assertThat(w.isDirect()).as("no copy on the way to the socket").isTrue();
            frame.release();
        }
        OutFrame binary =
                WireFrames.webSocket(OutFrame.Kind.BINARY, ALLOC.buffer().writeByte(7), ALLOC);
        assertThat(ByteBufUtil.getBytes(binary.wire())).containsExactly(0x82, 1, 7);
        binary.release();
    }

    @Test
    void sseEventsAreOneHttpChunkAsTheChunkedEncoderWritesIt() {
        OutFrame frame =
                frames.broadcast("realtime:t", jsonBroadcast("hello", "{\"n\":1}", "id-1"), Framing.SSE, false, ALLOC);
        String events = frame.payloadText();
        assertThat(frame.wire().toString(StandardCharsets.UTF_8))
                .isEqualTo(
                        Integer.toHexString(events.getBytes(StandardCharsets.UTF_8).length) + "\r\n" + events + "\r\n");
        frame.release();
    }
}
