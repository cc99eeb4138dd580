package dev.aura.realtime.front.fanout;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.testing.ChannelHarness;
import dev.aura.realtime.front.testing.FrontFixture;
import dev.aura.realtime.front.testing.LeakWatch;
import dev.aura.realtime.front.testing.ServerFrames;
import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelOutboundBuffer;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The write path with real sessions on EmbeddedChannels (docs/design.md D8): shared complete frames
 * written past the encoders, one flush per socket per turn, the per-socket byte budget, and the
 * event loop queue's time and byte bounds. Runs under paranoid leak detection; no buffer may leak.
 */
class WritePathTest {
    private final ChannelHarness h = new ChannelHarness();
    private final List<ChannelHarness.Conn> conns = new ArrayList<>();

    @BeforeAll
    static void watchLeaks() {
        LeakWatch.install();
    }

    @AfterEach
    void closeConnections() {
        conns.forEach(ChannelHarness.Conn::close);
    }

    @AfterAll
    static void noBufferLeaked() {
        LeakWatch.assertNoLeaks();
    }

    /** A socket whose writes are counted, and held back (never reach the peer) while {@link #stalled}. */
    static final class Socket extends EmbeddedChannel {
        int writes;
        boolean stalled;

        @Override
        protected void doWrite(ChannelOutboundBuffer in) throws Exception {
            if (in.current() != null) {
                writes++;
            }
            if (!stalled) {
                super.doWrite(in);
            }
        }
    }

    private ChannelHarness.Conn joined(Vsn vsn, EmbeddedChannel ch, String topic) {
        ChannelHarness.Conn c = h.connect(vsn, ch);
        conns.add(c);
        c.send(
                vsn == Vsn.V2
                        ? "[\"1\",\"1\",\"" + topic + "\",\"phx_join\",{\"config\":{}}]"
                        : "{\"topic\":\"" + topic
                                + "\",\"event\":\"phx_join\",\"payload\":{\"config\":{}},\"ref\":\"1\",\"join_ref\":\"1\"}");
        assertThat(c.drain()).hasSize(1);
        return c;
    }

    private void relayed(String channel, String id, String payloadJson) {
        h.fanout.onBroadcast(
                FrontFixture.PROJECT,
                channel,
                new UserBroadcast("e", payloadJson.getBytes(StandardCharsets.UTF_8), true, id));
    }

    private static ByteBuf root(ByteBuf b) {
        while (b.unwrap() != null) {
            b = b.unwrap();
        }
        return b;
    }

    private double counter(String name) {
        return h.meters.get(name).counter().count();
    }

    @Test
    void aBroadcastIsOneCompleteFrameSharedByEverySocketOfAFraming() {
        ChannelHarness.Conn a = joined(Vsn.V1, new Socket(), "realtime:room");
        ChannelHarness.Conn b = joined(Vsn.V1, new Socket(), "realtime:room");
        ChannelHarness.Conn c = joined(Vsn.V2, new Socket(), "realtime:room");

        relayed("room", "id-1", "{\"n\":1}");
        a.ch.runPendingTasks();
        b.ch.runPendingTasks();
        c.ch.runPendingTasks();

        ByteBuf onA = a.ch.readOutbound();
        ByteBuf onB = b.ch.readOutbound();
        ByteBuf onC = c.ch.readOutbound();
        try {
            assertThat(root(onA)).as("the vsn 1.0.0 sockets share one encoding").isSameAs(root(onB));
            assertThat(root(onC)).as("vsn 2.0.0 has its own").isNotSameAs(root(onA));
            assertThat(ServerFrames.decode(onA).text())
                    .isEqualTo(
                            "{\"topic\":\"realtime:room\",\"event\":\"broadcast\",\"payload\":{\"type\":\"broadcast\","
                                    + "\"event\":\"e\",\"payload\":{\"n\":1},\"meta\":{\"id\":\"id-1\"}},\"ref\":null}");
            ServerFrames.Message binary = ServerFrames.decode(onC);
            assertThat(binary.binary()).isTrue();
            assertThat(binary.bytes()[0]).as("kind 4 user broadcast").isEqualTo((byte) 4);
        } finally {
            onA.release();
            onB.release();
            onC.release();
        }
    }

    @Test
    void messagesOfOneTurnLeaveEachSocketInOneFlushInOrder() {
        Socket socket = new Socket();
        ChannelHarness.Conn a = joined(Vsn.V2, socket, "realtime:room");
        int before = socket.writes;

        for (int n = 1; n <= 5; n++) {
            relayed("room", "id-" + n, "{\"n\":" + n + "}");
        }
        h.fanout.onCdcStatus(new dev.aura.realtime.common.wire.CdcStatus("w", true, null, null, null, 0));
        socket.runPendingTasks();

        assertThat(socket.writes - before).as("one flush for five messages").isEqualTo(1);
        for (int n = 1; n <= 5; n++) {
            byte[] frame = a.nextBinary();
            assertThat(new String(frame, StandardCharsets.UTF_8)).endsWith("{\"n\":" + n + "}");
        }
        assertThat(a.nextMessage()).isNull();
    }

    @Test
    void aLongTurnStillFlushesEveryHundredAndTwentyEightWrites() {
        Socket socket = new Socket();
        ChannelHarness.Conn a = joined(Vsn.V2, socket, "realtime:room");
        int before = socket.writes;

        for (int n = 1; n <= 300; n++) {
            relayed("room", "id-" + n, "{\"n\":" + n + "}");
        }
        socket.runPendingTasks();

        assertThat(socket.writes - before)
                .as("after 128, after 256, at the end of the turn")
                .isEqualTo(3);
        int received = 0;
        while (a.nextMessage() != null) {
            received++;
        }
        assertThat(received).isEqualTo(300);
    }

    @Test
    void aSocketOverItsOutboundBudgetIsDroppedWhileTheOthersGetEverything() {
        Socket lazy = new Socket();
        ChannelHarness.Conn slow = joined(Vsn.V1, lazy, "realtime:firehose");
        ChannelHarness.Conn fine = joined(Vsn.V1, new Socket(), "realtime:firehose");
        lazy.stalled = true; // nothing it is sent leaves its outbound buffer
        String payload = "{\"d\":\"" + "y".repeat(16 * 1024) + "\"}";

        int sent = 0;
        for (; sent < 100 && lazy.isOpen(); sent++) {
            relayed("firehose", "id-" + sent, payload);
            lazy.runPendingTasks();
            fine.ch.runPendingTasks();
        }

        assertThat(lazy.isOpen()).as("dropped once more than 1 MiB was queued").isFalse();
        assertThat(sent).isBetween(60, 80);
        assertThat(counter("aura.ws.slow.clients.dropped")).isEqualTo(1);
        assertThat(fine.drain()).as("the healthy socket got every message").hasSize(sent);
        assertThat(slow.drain()).isEmpty();
    }

    @Test
    void aMessageThatWaitedPastTheQueueBoundClosesItsRecipientsAfterWhatTheyGot() {
        Socket socket = new Socket();
        ChannelHarness.Conn a = joined(Vsn.V2, socket, "realtime:room");

        relayed("room", "id-1", "{\"n\":1}");
        socket.runPendingTasks();
        relayed("room", "id-2", "{\"n\":2}");
        relayed("room", "id-3", "{\"n\":3}");
        h.clock.advance(Duration.ofMillis(5_001)); // the loop did not get to them for longer than 5 s
        socket.runPendingTasks();

        assertThat(new String(a.nextBinary(), StandardCharsets.UTF_8)).endsWith("{\"n\":1}");
        assertThat(a.nextMessage())
                .as("nothing after the first message it missed")
                .isNull();
        assertThat(socket.isOpen())
                .as("the close tells the client it missed messages")
                .isFalse();
        assertThat(counter("aura.ws.overload.shed")).isEqualTo(1);
        assertThat(counter("aura.ws.slow.clients.dropped")).isZero();
        assertThat(h.meters.get("aura.ws.queued.bytes").gauge().value()).isZero();
    }

    @Test
    void aMessageThatDoesNotFitTheQueueClosesItsRecipientsAtOnce() {
        Socket socket = new Socket();
        joined(Vsn.V1, socket, "realtime:big");

        relayed("big", "id-1", "\"" + "z".repeat(1 << 20) + "\""); // the harness allows 1 MiB per loop queue

        assertThat(socket.isOpen()).isFalse();
        assertThat(counter("aura.ws.overload.shed")).isEqualTo(1);
        assertThat(h.meters.get("aura.ws.queued.bytes").gauge().value()).isZero();
    }

    @Test
    void aReplyAfterSharedFramesOnTheSameTurnIsFlushedWithThem() {
        Socket socket = new Socket();
        ChannelHarness.Conn a = joined(Vsn.V2, socket, "realtime:room");
        int before = socket.writes;

        relayed("room", "id-1", "{\"n\":1}");
        a.ch.writeInbound(new io.netty.handler.codec.http.websocketx.TextWebSocketFrame(
                "[null,\"7\",\"phoenix\",\"heartbeat\",{}]"));
        socket.runPendingTasks();

        assertThat(socket.writes - before).isEqualTo(1);
        assertThat(a.next().get(3).asText())
                .as("the reply, written on the turn it was read")
                .isEqualTo("phx_reply");
        assertThat(a.nextBinary()[0]).isEqualTo((byte) 4);
    }
}
