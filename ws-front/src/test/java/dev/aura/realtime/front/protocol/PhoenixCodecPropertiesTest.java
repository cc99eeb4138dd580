package dev.aura.realtime.front.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.testing.LeakWatch;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Issue 9, hostile input on the Phoenix codec: any text frame (vsn 1 and 2), any binary frame,
 * and kind 3 frames with lying length bytes decode to a message or {@code Malformed}; nothing
 * throws into the pipeline, every inbound frame is released, and (PARANOID leak detection)
 * Netty reports no leaked buffer. Well-formed frames round trip field for field.
 */
class PhoenixCodecPropertiesTest {
    private final JsonFrames json = new JsonFrames(WireJson.mapper(), 100);
    private final BinaryFrames binary = new BinaryFrames(json);
    private final AtomicInteger malformed = new AtomicInteger();

    @BeforeContainer
    static void watchLeaks() {
        LeakWatch.install();
        LeakWatch.drain();
    }

    @AfterContainer
    static void noLeaks() {
        LeakWatch.assertNoLeaks();
    }

    private PhoenixMessage.Inbound decode(Vsn vsn, WebSocketFrame frame) {
        EmbeddedChannel ch = new EmbeddedChannel(new PhoenixCodec(vsn, json, binary, malformed::incrementAndGet));
        ch.writeInbound(frame); // an exception here would fail the property
        ch.checkException();
        assertThat(frame.refCnt()).as("inbound frame released").isZero();
        List<Object> out = List.copyOf(ch.inboundMessages());
        assertThat(out).hasSize(1);
        assertThat(ch.finishAndReleaseAll()).isTrue(); // exactly the decoded message was left
        return (PhoenixMessage.Inbound) out.get(0);
    }

    private static ByteBuf pooled(byte[] bytes) {
        return PooledByteBufAllocator.DEFAULT.buffer(bytes.length).writeBytes(bytes);
    }

    @Property(tries = 1500)
    void anyTextFrameDecodesWithoutThrowing(@ForAll("texts") String text, @ForAll boolean v2) {
        assertThat(decode(v2 ? Vsn.V2 : Vsn.V1, new TextWebSocketFrame(pooled(text.getBytes(StandardCharsets.UTF_8)))))
                .isNotNull();
    }

    @Provide
    Arbitrary<String> texts() {
        Arbitrary<String> token = Arbitraries.of(
                "null",
                "\"1\"",
                "1",
                "[]",
                "{}",
                "\"realtime:a\"",
                "\"phx_join\"",
                "\"heartbeat\"",
                "\"broadcast\"",
                "\"presence\"",
                "\"access_token\"",
                "\"phx_leave\"",
                "{\"config\":{\"postgres_changes\":[{}]}}",
                "{\"type\":\"broadcast\",\"event\":1}",
                "\"\\ud800\"",
                "1e999",
                "-0",
                "true");
        return Arbitraries.oneOf(
                Arbitraries.strings().all().ofMaxLength(100),
                token.list().ofMaxSize(7).map(l -> "[" + String.join(",", l) + "]"),
                token.list().ofMaxSize(7).map(l -> "[" + String.join(",", l)), // truncated
                token.list()
                        .ofSize(5)
                        .map(l -> "{\"join_ref\":" + l.get(0) + ",\"ref\":" + l.get(1) + ",\"topic\":" + l.get(2)
                                + ",\"event\":" + l.get(3) + ",\"payload\":" + l.get(4) + "}"));
    }

    @Property(tries = 1500)
    void anyBinaryFrameDecodesWithoutThrowing(@ForAll @Size(max = 300) byte[] bytes, @ForAll boolean v2) {
        assertThat(decode(v2 ? Vsn.V2 : Vsn.V1, new BinaryWebSocketFrame(pooled(bytes))))
                .isNotNull();
    }

    @Property(tries = 1500)
    void kind3WithLyingLengthBytesIsMalformedOrConsistent(
            @ForAll("fields") List<String> f,
            @ForAll @Size(max = 64) byte[] payload,
            @ForAll @IntRange(min = 1, max = 6) int lyingByte,
            @ForAll byte lie) {
        byte[] frame = PhoenixCodecTest.kind3(f.get(0), f.get(1), f.get(2), f.get(3), "", 0, payload);
        frame[lyingByte] = lie;
        PhoenixMessage.Inbound m = decode(Vsn.V2, new BinaryWebSocketFrame(pooled(frame)));
        if (m instanceof PhoenixMessage.BroadcastPush b) {
            // a lie that still fits the frame just moves the boundaries; the payload is what is left
            assertThat(b.broadcast().payload().length).isLessThanOrEqualTo(frame.length);
        } else {
            assertThat(m).isInstanceOfAny(PhoenixMessage.Malformed.class, PhoenixMessage.Inbound.class);
        }
    }

    @Provide
    Arbitrary<List<String>> fields() {
        return Arbitraries.strings().ascii().ofMaxLength(40).list().ofSize(4);
    }

    @Property(tries = 1000)
    void wellFormedKind3RoundTrips(@ForAll("fields") List<String> f, @ForAll @Size(max = 200) byte[] payload) {
        String topic = "realtime:" + f.get(2);
        String event = f.get(3).isEmpty() ? "e" : f.get(3);
        PhoenixMessage.Inbound m = decode(
                Vsn.V2,
                new BinaryWebSocketFrame(
                        pooled(PhoenixCodecTest.kind3(f.get(0), f.get(1), topic, event, "", 0, payload))));
        assertThat(m).isInstanceOf(PhoenixMessage.BroadcastPush.class);
        PhoenixMessage.BroadcastPush b = (PhoenixMessage.BroadcastPush) m;
        assertThat(b.joinRef()).isEqualTo(f.get(0).isEmpty() ? null : f.get(0));
        assertThat(b.ref()).isEqualTo(f.get(1).isEmpty() ? null : f.get(1));
        assertThat(b.topic()).isEqualTo(topic);
        assertThat(b.broadcast().event()).isEqualTo(event);
        assertThat(b.broadcast().json()).isFalse();
        assertThat(b.broadcast().payload()).containsExactly(payload);
    }

    @Property(tries = 1000)
    void wellFormedJsonFramesRoundTripOnBothVersions(
            @ForAll("anyString") String joinRef,
            @ForAll("anyString") String ref,
            @ForAll("anyString") String topic,
            @ForAll boolean leave,
            @ForAll boolean v2)
            throws Exception {
        String event = leave ? "phx_leave" : "heartbeat";
        topic = leave ? topic : "phoenix"; // a heartbeat on another topic is an unknown event (Other)
        // as a browser sends it: valid UTF-8, with lone surrogates as \\u escapes
        var mapper = WireJson.mapper().writer().with(com.fasterxml.jackson.core.json.JsonWriteFeature.ESCAPE_NON_ASCII);
        String text;
        if (v2) {
            text = mapper.writeValueAsString(
                    List.of(joinRef, ref, topic, event, JsonNodeFactory.instance.objectNode()));
        } else {
            var o = JsonNodeFactory.instance
                    .objectNode()
                    .put("join_ref", joinRef)
                    .put("ref", ref)
                    .put("topic", topic)
                    .put("event", event);
            o.putObject("payload");
            text = mapper.writeValueAsString(o);
        }
        PhoenixMessage.Inbound m =
                decode(v2 ? Vsn.V2 : Vsn.V1, new TextWebSocketFrame(pooled(text.getBytes(StandardCharsets.UTF_8))));
        assertThat(m)
                .isEqualTo(
                        leave
                                ? new PhoenixMessage.Leave(joinRef, ref, topic)
                                : new PhoenixMessage.Heartbeat(joinRef, ref, topic));
    }

    @Provide
    Arbitrary<String> anyString() {
        return Arbitraries.strings().all().ofMinLength(1).ofMaxLength(30);
    }

    @Example
    void leakWatchCatchesADeliberateLeak() {
        LeakWatch.drain();
        leak();
        assertThat(LeakWatch.drain())
                .as("the detector reports a dropped buffer")
                .isNotEmpty();
    }

    private static void leak() {
        ByteBuf dropped = PooledByteBufAllocator.DEFAULT.buffer(16);
        dropped.writeInt(42); // never released
    }
}
