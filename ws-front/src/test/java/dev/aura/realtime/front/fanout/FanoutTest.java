package dev.aura.realtime.front.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.history.HistoryStore;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.BinaryFrames;
import dev.aura.realtime.front.protocol.FanoutFrames;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.JsonFrames;
import dev.aura.realtime.front.protocol.OutFrame;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.testing.ServerFrames;
import dev.aura.realtime.testkit.MutableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The fan-out in memory: real frames and history, hand-written subscribers on an embedded event loop. */
class FanoutTest {
    private static final String PROJECT = "p1";
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final ObjectMapper mapper = WireJson.mapper();
    private final JsonFrames json = new JsonFrames(mapper, 100);
    private final FrontMetrics metrics = new FrontMetrics(new SimpleMeterRegistry());
    private final LocalTopics topics = new LocalTopics();
    private final HistoryStore history = new HistoryStore(3, 100, 1 << 20, 600_000, 100, 1 << 20);
    private final CdcHealth cdc = new CdcHealth(topics, metrics, clock);
    private final Fanout fanout = new Fanout(
            topics,
            new FanoutFrames(json, new BinaryFrames(json)),
            UnpooledByteBufAllocator.DEFAULT,
            metrics,
            clock,
            history,
            new QueueLimits(Duration.ofSeconds(5), 1 << 20),
            () -> clock.millis() * 1_000_000L,
            cdc);
    private final EmbeddedChannel loop = new EmbeddedChannel();
    private final List<ByteBuf> written = new ArrayList<>();

    @AfterEach
    void everyFrameIsReleasedWithItsLastRecipient() {
        for (ByteBuf frame : written) {
            frame.release();
        }
        assertThat(written).allSatisfy(f -> assertThat(f.refCnt()).isZero());
        loop.finishAndReleaseAll();
    }

    /** The buffer a view was made of (through duplicates and leak-detection wrappers). */
    private static ByteBuf root(ByteBuf b) {
        while (b.unwrap() != null) {
            b = b.unwrap();
        }
        return b;
    }

    /** Runs the event loop's pending tasks: the delivery queue's drain and its flushes. */
    private void drain() {
        loop.runPendingTasks();
    }

    /** A connection that records the bytes it is sent and decodes them as a client would. */
    final class Conn implements Recipient, LoopOutbox.Flushable {
        final Framing framing;
        final List<ByteBuf> frames = new ArrayList<>();
        final List<String> texts = new ArrayList<>();
        final List<Boolean> binary = new ArrayList<>();
        boolean unflushed;
        int flushes;
        boolean closed;
        /** A write to this connection throws (a bug in the write path). */
        boolean broken;

        Conn(Framing framing) {
            this.framing = framing;
        }

        @Override
        public Framing framing() {
            return framing;
        }

        @Override
        public EventLoop eventLoop() {
            return loop.eventLoop();
        }

        @Override
        public boolean writeShared(OutFrame frame) {
            if (broken) {
                throw new IllegalStateException("broken connection");
            }
            if (closed) {
                return false;
            }
            ByteBuf bytes = frame.retainedWire();
            written.add(bytes); // released after the test
            frames.add(bytes);
            if (framing == Framing.SSE) {
                String chunk = bytes.toString(StandardCharsets.UTF_8);
                int head = chunk.indexOf("\r\n");
                assertThat(Integer.parseInt(chunk.substring(0, head), 16))
                        .as("chunk length")
                        .isEqualTo(bytes.readableBytes() - head - 4);
                assertThat(chunk).endsWith("\r\n");
                texts.add(chunk.substring(head + 2, chunk.length() - 2));
                binary.add(false);
            } else {
                ServerFrames.Message m = ServerFrames.decode(bytes);
                texts.add(m.text());
                binary.add(m.binary());
            }
            fanout.outbox(loop.eventLoop()).flushLater(this);
            return true;
        }

        @Override
        public void deliver(OutFrame frame) {
            writeShared(frame);
        }

        @Override
        public boolean shed() {
            boolean first = !closed;
            closed = true;
            return first;
        }

        @Override
        public boolean markUnflushed() {
            boolean first = !unflushed;
            unflushed = true;
            return first;
        }

        @Override
        public void flush() {
            unflushed = false;
            flushes++;
        }

        /** The text of message {@code i} (SSE events, text frames). */
        String text(int i) {
            return texts.get(i);
        }
    }

    /** A joined channel that records its pushes. */
    final class Sub implements Subscriber {
        final Conn conn;
        final String channel;
        final List<PostgresBinding> bindings;
        final List<String> pushes = new ArrayList<>();
        final Set<String> resumed = new HashSet<>();
        boolean active = true;

        Sub(Conn conn, String channel, PostgresBinding... bindings) {
            this.conn = conn;
            this.channel = channel;
            this.bindings = List.of(bindings);
            topics.add(this);
        }

        @Override
        public Recipient recipient() {
            return conn;
        }

        @Override
        public String topic() {
            return "realtime:" + channel;
        }

        @Override
        public String projectId() {
            return PROJECT;
        }

        @Override
        public String channelName() {
            return channel;
        }

        @Override
        public boolean active() {
            return active;
        }

        @Override
        public List<PostgresBinding> bindings() {
            return bindings;
        }

        @Override
        public void push(String event, JsonNode payload) {
            pushes.add(event + " " + payload);
        }

        @Override
        public void markResumed(String messageId) {
            resumed.add(messageId);
        }

        @Override
        public boolean resumed(String messageId) {
            return resumed.contains(messageId);
        }
    }

    private static UserBroadcast message(String id, int n) {
        return new UserBroadcast("e", ("{\"n\":" + n + "}").getBytes(StandardCharsets.UTF_8), true, id);
    }

    private static PostgresBinding binding(int id, String subId) {
        return new PostgresBinding(id, subId, "*", "todos", null, JsonNodeFactory.instance.objectNode());
    }

    @Test
    void aBroadcastReachesEveryActiveMemberButTheSenderEncodedOncePerFraming() {
        Conn sender = new Conn(Framing.V1);
        Conn v1a = new Conn(Framing.V1);
        Conn v1b = new Conn(Framing.V1);
        Conn v2 = new Conn(Framing.V2);
        Conn sse = new Conn(Framing.SSE);
        Conn closed = new Conn(Framing.V1);
        Conn elsewhere = new Conn(Framing.V1);
        new Sub(sender, "room");
        new Sub(v1a, "room");
        new Sub(v1b, "room");
        new Sub(v2, "room");
        new Sub(sse, "room");
        new Sub(closed, "room").active = false;
        new Sub(elsewhere, "other");

        fanout.broadcastLocal(PROJECT, "room", message("id-1", 1), sender);
        drain();

        assertThat(sender.frames).isEmpty();
        assertThat(closed.frames).isEmpty();
        assertThat(elsewhere.frames).isEmpty();
        assertThat(v1a.text(0)).contains("\"payload\":{\"n\":1},\"meta\":{\"id\":\"id-1\"}");
        assertThat(root(v1a.frames.get(0)))
                .as("one encoding shared by the vsn 1.0.0 sockets")
                .isSameAs(root(v1b.frames.get(0)));
        assertThat(v1a.frames.get(0).refCnt())
                .as("referenced by the two vsn 1.0.0 sockets only")
                .isEqualTo(2);
        assertThat(v2.binary.get(0)).isTrue();
        assertThat(sse.text(0)).startsWith("id: id-1\nevent: broadcast\ndata: ");
        assertThat(v1a.flushes).as("one flush per socket and drain").isEqualTo(1);
    }

    @Test
    void aWriteThatThrowsClosesTheMembersNotReachedAndTheLoopGoesOn() {
        Conn first = new Conn(Framing.V1);
        Conn broken = new Conn(Framing.V1);
        Conn after = new Conn(Framing.V1);
        new Sub(first, "room");
        new Sub(broken, "room");
        new Sub(after, "room");
        broken.broken = true;

        fanout.broadcastLocal(PROJECT, "room", message("id-1", 1), null);
        drain();
        broken.broken = false;
        fanout.broadcastLocal(PROJECT, "room", message("id-2", 2), null);
        drain();

        // member order is the channel's set order: whoever came after the broken one was closed,
        // whoever came before got the first message; nobody open missed one silently
        for (Conn c : List.of(first, broken, after)) {
            assertThat(c.closed || c.frames.size() == 2)
                    .as("closed, or got both messages")
                    .isTrue();
        }
        assertThat(broken.closed).isTrue();
    }

    @Test
    void aBroadcastIsRecordedInHistoryAlsoWithoutLocalMembers() {
        fanout.onBroadcast(PROJECT, "empty", message("id-1", 1));
        assertThat(history.since(PROJECT, "empty", 0, 10, clock.millis()))
                .extracting(e -> e.message().id())
                .containsExactly("id-1");
    }

    @Test
    void aChangeReachesTheBindingsItAllowsWithTheirIdsInOnePush() {
        Conn conn = new Conn(Framing.V2);
        Conn other = new Conn(Framing.V2);
        new Sub(conn, "db", binding(11, "s1"), binding(12, "s2"), binding(13, "s3"));
        new Sub(other, "db", binding(11, "s4"));
        JsonNode data = JsonNodeFactory.instance.objectNode().put("type", "INSERT");

        fanout.onChange(new ChangeEvent("0/1:0", PROJECT, "todos", "INSERT", List.of("s1", "s2", "unknown"), data));
        fanout.onChange(new ChangeEvent("0/1:1", "another-project", "todos", "INSERT", List.of("s4"), data));
        drain();

        assertThat(conn.frames).hasSize(1);
        assertThat(conn.text(0))
                .isEqualTo(
                        "[null,null,\"realtime:db\",\"postgres_changes\",{\"ids\":[11,12],\"data\":{\"type\":\"INSERT\"}}]");
        assertThat(other.frames)
                .as("a sub id of another project is never served")
                .isEmpty();
    }

    @Test
    void cdcStatusIsPushedOnFlipsAndNewGapsOnly() {
        Sub db = new Sub(new Conn(Framing.V1), "db", binding(1, "s1"));
        Sub plain = new Sub(new Conn(Framing.V1), "room");

        fanout.onCdcStatus(new CdcStatus("w", true, null, null, null, 0));
        assertThat(db.pushes).as("active from unknown is no news").isEmpty();
        fanout.onCdcStatus(new CdcStatus("w", false, "slot lost", null, null, 0));
        fanout.onCdcStatus(new CdcStatus("w", false, "slot lost", null, null, 0));
        fanout.onCdcStatus(new CdcStatus("w", false, "starting", "0/1", "0/2", 0));
        fanout.onCdcStatus(new CdcStatus("w", false, "starting", "0/1", "0/2", 0));
        fanout.onCdcStatus(new CdcStatus("w", true, null, null, null, 0));

        assertThat(db.pushes)
                .containsExactly(
                        "system {\"extension\":\"postgres_changes\",\"status\":\"error\",\"message\":\"slot lost\",\"channel\":\"db\"}",
                        "system {\"extension\":\"postgres_changes\",\"status\":\"error\",\"message\":\"starting\",\"channel\":\"db\"}",
                        "system {\"extension\":\"postgres_changes\",\"status\":\"ok\",\"message\":\"Subscribed to PostgreSQL\",\"channel\":\"db\"}");
        assertThat(plain.pushes)
                .as("channels without postgres_changes hear nothing")
                .isEmpty();
        assertThat(cdc.knownInactive()).isFalse();
    }

    @Test
    void aLostNatsLinkIsToldLikeAnInactiveCdc_andOkFollowsTheFirstStatusAfterItIsBack() {
        Sub db = new Sub(new Conn(Framing.V1), "db", binding(1, "s1"));
        Sub plain = new Sub(new Conn(Framing.V1), "room");
        fanout.onCdcStatus(new CdcStatus("w", true, null, null, null, 0));

        cdc.relayLinkLost();
        assertThat(db.pushes).singleElement().asString().contains("\"status\":\"error\"", "RealtimeLinkLost");
        assertThat(cdc.knownInactive()).as("a join meanwhile is told too").isTrue();
        fanout.onCdcStatus(new CdcStatus("w", true, null, null, null, 0));
        clock.advance(Duration.ofSeconds(60));
        cdc.checkSilence(15_000);
        assertThat(db.pushes)
                .as("a status read before the drop, and silence while down, say nothing new")
                .hasSize(1);

        cdc.relayLinkRestored();
        assertThat(db.pushes)
                .as("no ok before a cdc-worker was heard over the new link")
                .hasSize(1);
        fanout.onCdcStatus(new CdcStatus("w", true, null, null, null, 0));
        assertThat(db.pushes).last().asString().contains("\"status\":\"ok\"", "Subscribed to PostgreSQL");
        assertThat(plain.pushes).isEmpty();
        assertThat(cdc.knownInactive()).isFalse();
    }

    @Test
    void whenNoCdcWorkerWasEverHeardTheRestoredLinkIsOkAtOnce() {
        Sub db = new Sub(new Conn(Framing.V1), "db", binding(1, "s1"));
        cdc.relayLinkLost();
        cdc.relayLinkRestored();
        assertThat(db.pushes).hasSize(2);
        assertThat(db.pushes.get(1)).contains("Subscribed to PostgreSQL");
    }

    @Test
    void aSilentCdcWorkerIsReportedInactiveAfterTheTimeout() {
        Sub db = new Sub(new Conn(Framing.V1), "db", binding(1, "s1"));
        cdc.checkSilence(15_000);
        assertThat(db.pushes).as("never heard of a worker: nothing to miss").isEmpty();

        fanout.onCdcStatus(new CdcStatus("w", true, null, null, null, 0));
        clock.advance(Duration.ofSeconds(15));
        cdc.checkSilence(15_000);
        assertThat(db.pushes).isEmpty();
        clock.advance(Duration.ofSeconds(1));
        cdc.checkSilence(15_000);
        cdc.checkSilence(15_000);

        assertThat(db.pushes).hasSize(1);
        assertThat(db.pushes.get(0)).contains("CdcWorkerSilent: no status from the cdc-worker for 16 seconds");
        assertThat(cdc.knownInactive()).isTrue();
        assertThat(cdc.inactiveMessage()).startsWith("CdcWorkerSilent");
    }

    @Test
    void replaySinceSendsTheNewestMessagesUpToTheHistorySize() {
        for (int n = 1; n <= 5; n++) {
            fanout.onBroadcast(PROJECT, "room", message("id-" + n, n));
        }
        Conn conn = new Conn(Framing.V1);
        Sub late = new Sub(conn, "room");

        fanout.replaySince(late, 0, 25);
        drain();

        assertThat(conn.frames).hasSize(3); // HISTORY_SIZE of this fanout
        assertThat(conn.text(0)).contains("\"meta\":{\"replayed\":true,\"id\":\"id-3\"}");
        assertThat(conn.text(2)).contains("\"meta\":{\"replayed\":true,\"id\":\"id-5\"}");
    }

    @Test
    void resumeSendsWhatCameAfterTheLastEventIdAndSkipsItsLiveCopies() {
        fanout.onBroadcast(PROJECT, "room", message("id-1", 1));
        fanout.onBroadcast(PROJECT, "room", message("id-2", 2));
        fanout.onBroadcast(PROJECT, "room", message("id-3", 3));
        Conn conn = new Conn(Framing.SSE);
        Sub sub = new Sub(conn, "room");

        fanout.resume(sub, "id-1");
        fanout.broadcastLocal(PROJECT, "room", message("id-3", 3), null); // a live copy still in flight
        fanout.broadcastLocal(PROJECT, "room", message("id-4", 4), null);
        drain();

        assertThat(conn.frames).hasSize(3);
        assertThat(conn.text(0)).startsWith("id: id-2\n").contains("\"replayed\":true");
        assertThat(conn.text(1)).startsWith("id: id-3\n").contains("\"replayed\":true");
        assertThat(conn.text(2)).startsWith("id: id-4\n").doesNotContain("replayed");
        assertThat(sub.pushes).isEmpty();
    }

    @Test
    void resumeFromAnIdNoLongerInHistoryIsAReset() {
        Sub sub = new Sub(new Conn(Framing.SSE), "room");
        fanout.resume(sub, "gone");
        assertThat(sub.pushes)
                .containsExactly(
                        "reset {\"reason\":\"HistoryGap: Last-Event-ID is no longer in the channel's history\","
                                + "\"last_event_id\":\"gone\"}");
    }
}
