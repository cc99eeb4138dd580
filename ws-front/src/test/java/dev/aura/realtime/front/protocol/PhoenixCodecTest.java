package dev.aura.realtime.front.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.wire.WireJson;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.PingWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class PhoenixCodecTest {
    private final JsonFrames json = new JsonFrames(WireJson.mapper(), 100);
    private final BinaryFrames binary = new BinaryFrames(json);
    private final AtomicInteger malformed = new AtomicInteger();
    private EmbeddedChannel channel;

    private EmbeddedChannel channel(Vsn vsn) {
        channel = new EmbeddedChannel(new PhoenixCodec(vsn, json, binary, malformed::incrementAndGet));
        return channel;
    }

    @AfterEach
    void nothingLeftOver() {
        if (channel != null) {
            assertThat(channel.finishAndReleaseAll()).isFalse();
        }
    }

    private PhoenixMessage.Inbound readText(Vsn vsn, String text) {
        EmbeddedChannel ch = channel(vsn);
        TextWebSocketFrame frame = new TextWebSocketFrame(text);
        ch.writeInbound(frame);
        assertThat(frame.refCnt()).isZero();
        return ch.readInbound();
    }

    private PhoenixMessage.Inbound readBinary(byte[] bytes) {
        EmbeddedChannel ch = channel(Vsn.V2);
        BinaryWebSocketFrame frame =
                new BinaryWebSocketFrame(Unpooled.buffer(bytes.length).writeBytes(bytes));
        ch.writeInbound(frame);
        assertThat(frame.refCnt()).isZero();
        return ch.readInbound();
    }

    @Test
    void decodesVsn1JoinObject() {
        var msg = readText(
                Vsn.V1,
                "{\"topic\":\"realtime:room\",\"event\":\"phx_join\",\"payload\":{\"config\":{}},\"ref\":\"1\",\"join_ref\":\"1\"}");
        assertThat(msg).isInstanceOf(PhoenixMessage.Join.class);
        var join = (PhoenixMessage.Join) msg;
        assertThat(join.topic()).isEqualTo("realtime:room");
        assertThat(join.ref()).isEqualTo("1");
        assertThat(join.joinRef()).isEqualTo("1");
        assertThat(join.config()).isNotNull();
        assertThat(join.refusal()).isNull();
    }

    @Test
    void decodesVsn2ArrayFramesByEvent() {
        assertThat(readText(Vsn.V2, "[null,\"5\",\"phoenix\",\"heartbeat\",{}]"))
                .isEqualTo(new PhoenixMessage.Heartbeat(null, "5", "phoenix"));
        channel.finishAndReleaseAll();
        assertThat(readText(Vsn.V2, "[\"1\",\"2\",\"realtime:a\",\"phx_leave\",{}]"))
                .isEqualTo(new PhoenixMessage.Leave("1", "2", "realtime:a"));
        channel.finishAndReleaseAll();
        assertThat(readText(Vsn.V2, "[\"1\",\"3\",\"realtime:a\",\"access_token\",{\"access_token\":\"t\"}]"))
                .isEqualTo(new PhoenixMessage.AccessToken("1", "3", "realtime:a", "t"));
        channel.finishAndReleaseAll();
        assertThat(readText(Vsn.V2, "[\"1\",\"4\",\"realtime:a\",\"something_new\",{}]"))
                .isInstanceOf(PhoenixMessage.Other.class);
    }

    @Test
    void decodesJsonTextBroadcast() {
        var msg = readText(
                Vsn.V2,
                "[\"1\",\"7\",\"realtime:a\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"cursor\",\"payload\":{\"x\":12345678901234567890.25}}]");
        var b = (PhoenixMessage.BroadcastPush) msg;
        assertThat(b.broadcast().event()).isEqualTo("cursor");
        assertThat(b.broadcast().json()).isTrue();
        assertThat(new String(b.broadcast().payload(), StandardCharsets.UTF_8))
                .isEqualTo("{\"x\":12345678901234567890.25}");
    }

    @Test
    void decodesKind3WithJsonPayload() {
        byte[] frame = kind3("1", "2", "realtime:room", "cursor", "", 1, "{\"x\":1}".getBytes(StandardCharsets.UTF_8));
        var b = (PhoenixMessage.BroadcastPush) readBinary(frame);
        assertThat(b.joinRef()).isEqualTo("1");
        assertThat(b.ref()).isEqualTo("2");
        assertThat(b.topic()).isEqualTo("realtime:room");
        assertThat(b.broadcast())
                .isEqualTo(new UserBroadcast("cursor", "{\"x\":1}".getBytes(StandardCharsets.UTF_8), true, null));
    }

    @Test
    void decodesKind3WithBinaryPayloadAndMetadata() {
        byte[] payload = {0, 1, 2, (byte) 0xFF};
        var b = (PhoenixMessage.BroadcastPush) readBinary(kind3("", "", "realtime:r", "bin", "{\"k\":1}", 0, payload));
        assertThat(b.joinRef()).isNull();
        assertThat(b.ref()).isNull();
        assertThat(b.broadcast().json()).isFalse();
        assertThat(b.broadcast().payload()).containsExactly(payload);
    }

    @Test
    void kind3HeaderWrittenWithCharCodeAtReadsBackAsLatin1() {
        byte[] topic = "realtime:caf\u00e9".getBytes(StandardCharsets.ISO_8859_1);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(3);
        out.writeBytes(new byte[] {0, 0, (byte) topic.length, 1, 0, 1});
        out.writeBytes(topic);
        out.write('e');
        out.writeBytes("1".getBytes(StandardCharsets.UTF_8));
        var b = (PhoenixMessage.BroadcastPush) readBinary(out.toByteArray());
        assertThat(b.topic()).isEqualTo("realtime:caf\u00e9");
    }

    @Test
    void lyingLengthBytesAreMalformedNotThrown() {
        byte[] frame = kind3("1", "2", "realtime:room", "cursor", "", 1, "{}".getBytes(StandardCharsets.UTF_8));
        frame[3] = (byte) 250; // topic length far beyond the frame
        assertThat(readBinary(frame)).isInstanceOf(PhoenixMessage.Malformed.class);
        channel.finishAndReleaseAll();
        assertThat(readBinary(new byte[] {3, 1})).isInstanceOf(PhoenixMessage.Malformed.class);
        channel.finishAndReleaseAll();
        assertThat(readBinary(new byte[0])).isInstanceOf(PhoenixMessage.Malformed.class);
        channel.finishAndReleaseAll();
        assertThat(readBinary(new byte[] {9, 0, 0})).isInstanceOf(PhoenixMessage.Malformed.class);
        channel.finishAndReleaseAll();
        byte[] badJson = kind3("1", "2", "realtime:room", "e", "", 1, "{\"x\":".getBytes(StandardCharsets.UTF_8));
        var m = (PhoenixMessage.Malformed) readBinary(badJson);
        assertThat(m.ref()).isEqualTo("2");
        channel.finishAndReleaseAll();
        assertThat(readBinary(kind3("1", "2", "realtime:room", "e", "", 7, new byte[0])))
                .isInstanceOf(PhoenixMessage.Malformed.class);
        assertThat(malformed.get()).isEqualTo(6);
    }

    @Test
    void malformedTextKeepsWhatCouldBeRead() {
        assertThat(readText(Vsn.V2, "not json")).isInstanceOf(PhoenixMessage.Malformed.class);
        channel.finishAndReleaseAll();
        assertThat(readText(Vsn.V2, "{\"topic\":\"x\"}")).isInstanceOf(PhoenixMessage.Malformed.class);
        channel.finishAndReleaseAll();
        var m = (PhoenixMessage.Malformed) readText(Vsn.V2, "[\"1\",\"9\",\"realtime:a\",42,{}]");
        assertThat(m.ref()).isEqualTo("9");
        assertThat(m.topic()).isEqualTo("realtime:a");
        channel.finishAndReleaseAll();
        assertThat(readText(Vsn.V2, "[\"1\",\"9\",\"realtime:a\",\"phx_join\",\"x\"]"))
                .isInstanceOf(PhoenixMessage.Malformed.class);
        channel.finishAndReleaseAll();
        assertThat(readText(Vsn.V2, "[1,2,3] [4]")).isInstanceOf(PhoenixMessage.Malformed.class);
    }

    @Test
    void binaryFrameOnVsn1IsMalformed() {
        EmbeddedChannel ch = channel(Vsn.V1);
        ch.writeInbound(new BinaryWebSocketFrame(Unpooled.wrappedBuffer(new byte[] {3, 0, 0, 0, 0, 0, 1})));
        assertThat((Object) ch.readInbound()).isInstanceOf(PhoenixMessage.Malformed.class);
    }

    @Test
    void controlFramesPassThrough() {
        EmbeddedChannel ch = channel(Vsn.V2);
        ch.writeInbound(new PingWebSocketFrame());
        PingWebSocketFrame ping = ch.readInbound();
        assertThat(ping).isNotNull();
        ping.release();
    }

    @Test
    void encodesRepliesPerVsn() {
        ObjectNode response = JsonNodeFactory.instance.objectNode().put("reason", "x");
        EmbeddedChannel v2 = channel(Vsn.V2);
        v2.writeOutbound(new PhoenixMessage.Reply("1", "2", "realtime:a", "error", response));
        assertThat(text(v2.readOutbound()))
                .isEqualTo(
                        "[\"1\",\"2\",\"realtime:a\",\"phx_reply\",{\"status\":\"error\",\"response\":{\"reason\":\"x\"}}]");
        v2.finishAndReleaseAll();
        EmbeddedChannel v1 = channel(Vsn.V1);
        v1.writeOutbound(new PhoenixMessage.Push("1", null, "realtime:a", "system", response));
        assertThat(text(v1.readOutbound()))
                .isEqualTo(
                        "{\"topic\":\"realtime:a\",\"event\":\"system\",\"payload\":{\"reason\":\"x\"},\"ref\":null}");
    }

    private static String text(Object frame) {
        TextWebSocketFrame f = (TextWebSocketFrame) frame;
        try {
            return f.text();
        } finally {
            f.release();
        }
    }

    static byte[] kind3(
            String joinRef, String ref, String topic, String event, String meta, int encoding, byte[] payload) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(3);
        out.write(joinRef.length());
        out.write(ref.length());
        out.write(topic.length());
        out.write(event.length());
        out.write(meta.length());
        out.write(encoding);
        for (String s : new String[] {joinRef, ref, topic, event, meta}) {
            out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
        }
        out.writeBytes(payload);
        return out.toByteArray();
    }

    @SuppressWarnings("unused")
    private static ByteBuf buf(String s) {
        return Unpooled.copiedBuffer(s, StandardCharsets.UTF_8);
    }
}
