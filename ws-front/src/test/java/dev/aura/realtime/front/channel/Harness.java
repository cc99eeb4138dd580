package dev.aura.realtime.front.channel;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.JwtVerifier;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.BinaryFrames;
import dev.aura.realtime.front.protocol.BroadcastFrames;
import dev.aura.realtime.front.protocol.JsonFrames;
import dev.aura.realtime.front.protocol.PhoenixCodec;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.testing.MutableClock;
import dev.aura.realtime.front.testing.Tokens;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/** The channel layer in memory: real index and fan-out, fake relay seams, EmbeddedChannel sockets. */
final class Harness {
    final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    final ObjectMapper mapper = WireJson.mapper();
    final JsonFrames json = new JsonFrames(mapper);
    final BinaryFrames binary = new BinaryFrames(json);
    final FrontMetrics metrics = new FrontMetrics(new SimpleMeterRegistry());
    final Fakes.Checker checker = new Fakes.Checker();
    final Fakes.Registry registry = new Fakes.Registry();
    final Fakes.Publisher publisher = new Fakes.Publisher();
    final LocalTopics topics = new LocalTopics(10);
    final Fanout fanout = new Fanout(
            topics, new BroadcastFrames(json, binary), json, UnpooledByteBufAllocator.DEFAULT, metrics, clock);
    final Sessions sessions = new Sessions();
    final JwtVerifier verifier = new JwtVerifier(Tokens.SECRET, clock);
    final ChannelServices services = new ChannelServices(
            verifier,
            checker,
            registry,
            publisher,
            topics,
            fanout,
            new PresenceExtension.Unavailable(),
            sessions,
            new Limits(3, 100, 100, 64, 1 << 20),
            metrics,
            "front-test",
            clock,
            mapper);

    String token(Duration ttl) {
        return Tokens.anon(clock.instant().plus(ttl));
    }

    Conn connect(Vsn vsn) {
        try {
            return new Conn(new EmbeddedChannel(
                    new PhoenixCodec(vsn, json, binary, metrics::malformed),
                    new SessionHandler(services, vsn, verifier.verify(token(Duration.ofHours(1))))));
        } catch (AuthException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One client socket. */
    final class Conn {
        final EmbeddedChannel ch;

        Conn(EmbeddedChannel ch) {
            this.ch = ch;
        }

        void send(String text) {
            ch.writeInbound(new TextWebSocketFrame(text));
            ch.runPendingTasks();
        }

        void sendBinary(byte[] bytes) {
            ch.writeInbound(new BinaryWebSocketFrame(ch.alloc().buffer().writeBytes(bytes)));
            ch.runPendingTasks();
        }

        /** Next text frame as JSON, or null when none is queued. */
        JsonNode next() {
            ch.runPendingTasks();
            WebSocketFrame f = ch.readOutbound();
            if (f == null) {
                return null;
            }
            try {
                if (!(f instanceof TextWebSocketFrame t)) {
                    throw new AssertionError("expected text frame, got " + f);
                }
                return mapper.readTree(t.text());
            } catch (java.io.IOException e) {
                throw new AssertionError(e);
            } finally {
                f.release();
            }
        }

        /** Next frame's bytes (binary frames). */
        byte[] nextBinary() {
            ch.runPendingTasks();
            WebSocketFrame f = ch.readOutbound();
            try {
                if (!(f instanceof BinaryWebSocketFrame)) {
                    throw new AssertionError("expected binary frame, got " + f);
                }
                return ByteBufUtil.getBytes(f.content());
            } finally {
                f.release();
            }
        }

        List<JsonNode> drain() {
            List<JsonNode> out = new ArrayList<>();
            for (JsonNode n = next(); n != null; n = next()) {
                out.add(n);
            }
            return out;
        }

        void close() {
            ch.finishAndReleaseAll();
        }
    }
}
