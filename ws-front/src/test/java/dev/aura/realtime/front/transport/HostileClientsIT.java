package dev.aura.realtime.front.transport;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.aura.realtime.front.FrontApp;
import dev.aura.realtime.front.testing.FrontCluster;
import dev.aura.realtime.front.testing.FrontFixture;
import dev.aura.realtime.front.testing.HeartbeatProbe;
import dev.aura.realtime.front.testing.LeakWatch;
import dev.aura.realtime.front.testing.WsTestClient;
import dev.aura.realtime.testkit.RawWebSocket;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.http.HttpClient;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 9, hostile clients against one ws-front with one event loop thread, so every attacking
 * socket shares the loop of the well-behaved client: oversized frames, 10,000 joins on one
 * socket, a join flood across sockets, slowloris connections that never finish the handshake,
 * and a client that never reads. In each test the well-behaved client heartbeats every 50 ms, and
 * so does a control client of a second replica in the same JVM that nobody attacks; each attack
 * lasts {@link #ATTACK} or more. The well-behaved client may go at most {@value #STALL_MS} ms
 * longer without an answer than the control (a pause of the JVM or the machine stops both): a
 * loop held by an attacker holds it for as long as the attack. No Netty buffer leaks.
 */
class HostileClientsIT {
    private static final int MAX_FRAME = 64 * 1024;
    /** How long each attack lasts at least, so that a loop it holds shows. */
    private static final Duration ATTACK = Duration.ofSeconds(2);
    /**
     * How much longer than the control the well-behaved client may go without an answer (ms):
     * a turn or two of the shared loop (one read of each busy socket) on a loaded machine, far
     * less than an attack.
     */
    static final long STALL_MS = 1_000;

    private static FrontCluster cluster;
    private static FrontApp app;
    private static FrontApp control;
    private static final HttpClient http = HttpClient.newHttpClient();
    private HeartbeatProbe probe;
    private HeartbeatProbe controlProbe;
    /** {@link #STALL_MS}, or more where the attack is the loop's own work (the 10,000-join burst). */
    private long allowanceMs;

    @BeforeAll
    static void start() throws Exception {
        LeakWatch.install();
        cluster = FrontCluster.start(Map.of(
                "WS_MAX_FRAME_BYTES",
                Integer.toString(MAX_FRAME),
                "WS_MAX_OUTBOUND_BYTES",
                Integer.toString(2 * 1024 * 1024),
                "WS_SLOW_CLIENT_TIMEOUT_MS",
                "2000",
                // the firehose sender must not hit the per-connection event rate: the point is the reader
                "WS_MAX_EVENTS_PER_SECOND",
                "100000",
                // one loop: every attacker shares the probe's (with Netty's 2 x cores, consecutive
                // sockets land on different loops and a stalled attacker's loop went unseen)
                "WS_IO_THREADS",
                "1"));
        app = cluster.replica("hostile");
        control = cluster.replica("control");
    }

    @AfterAll
    static void stop() {
        if (cluster != null) {
            cluster.close();
        }
        LeakWatch.assertNoLeaks();
    }

    @BeforeEach
    void startProbes() {
        allowanceMs = STALL_MS;
        // own HttpClients: a shared one would put the probes behind the attackers' selector thread
        probe = new HeartbeatProbe(new WsTestClient(HttpClient.newHttpClient(), url()));
        controlProbe =
                new HeartbeatProbe(new WsTestClient(HttpClient.newHttpClient(), FrontFixture.wsUrl(control.port())));
    }

    @AfterEach
    void probeStayedResponsive() throws Exception {
        long attackMs = probe.elapsedMs();
        probe.stop();
        controlProbe.stop();
        long gap = probe.longestSilenceMs();
        long controlGap = controlProbe.longestSilenceMs();
        System.out.printf(
                "probe: %d heartbeats in %d ms of attack, longest without an answer %d ms; control (not attacked): %d"
                        + " heartbeats, longest without an answer %d ms%n",
                probe.count(), attackMs, gap, controlProbe.count(), controlGap);
        assertThat(attackMs).as("the attack's duration (ms)").isGreaterThanOrEqualTo(ATTACK.toMillis());
        assertThat(probe.missed())
                .as("heartbeats left unanswered for %d ms", HeartbeatProbe.ANSWER_WAIT.toMillis())
                .isZero();
        // Silences, not round trips: a pause of the JVM or the machine (one answer took 2.5 s here
        // without any attack, issue 26) lengthens both clients' silences, whether a heartbeat was
        // in flight or the client was between two.
        assertThat(gap)
                .as(
                        "longest a well-behaved client went without an answer (ms), the control's %d + %d",
                        controlGap, allowanceMs)
                .isLessThanOrEqualTo(controlGap + allowanceMs);
    }

    private static String url() {
        return FrontFixture.wsUrl(app.port());
    }

    private static WsTestClient connect() {
        return new WsTestClient(http, url());
    }

    @Test
    void oversizedFramesCloseTheirSocketOnly() throws Exception {
        String big = "[null,\"1\",\"realtime:x\",\"broadcast\",{\"p\":\"" + "x".repeat(MAX_FRAME * 4) + "\"}]";
        long until = System.nanoTime() + ATTACK.toNanos();
        int rounds = 0;
        do { // rounds of 20 sockets until the attack has lasted ATTACK
            List<WsTestClient> attackers = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                WsTestClient c = connect();
                attackers.add(c);
                try {
                    c.send(big);
                } catch (RuntimeException closedWhileSending) {
                    // the server may close before the whole frame is written: that is the point
                }
            }
            await().atMost(Duration.ofSeconds(5))
                    .until(() -> attackers.stream().allMatch(WsTestClient::closedByServer));
            attackers.forEach(WsTestClient::close);
            rounds++;
        } while (System.nanoTime() < until);
        System.out.printf("oversized frames: %d rounds of 20 sockets%n", rounds);
        WsTestClient fresh = connect();
        fresh.send("[null,\"9\",\"phoenix\",\"heartbeat\",{}]");
        assertThat(fresh.poll(Duration.ofSeconds(2)))
                .as("a new client is served")
                .isNotNull();
        fresh.close();
    }

    /**
     * The 10,000 joins go out in one write, so the server has them all at once (sent one by one,
     * they arrive as they are written and the server takes turns for free). A loop that serves
     * its sockets in turn answers the probe between the replies to the burst.
     */
    @Test
    void tenThousandJoinsOnOneSocketAreRefusedWithoutStallingOthers() throws Exception {
        ByteArrayOutputStream burst = new ByteArrayOutputStream();
        for (int i = 0; i < 10_000; i++) {
            burst.write(RawWebSocket.maskedText(
                    "[\"" + i + "\",\"" + i + "\",\"realtime:room-" + i + "\",\"phx_join\",{\"config\":{}}]"));
        }
        byte[] joins = burst.toByteArray();
        try (Socket raw = new Socket("127.0.0.1", app.port())) {
            raw.setSoTimeout(20_000);
            InputStream in = new BufferedInputStream(raw.getInputStream());
            OutputStream out = raw.getOutputStream();
            out.write(RawWebSocket.upgradeRequest(url().substring(url().indexOf("/realtime"))));
            assertThat(RawWebSocket.readUntil(in, "\r\n\r\n")).startsWith("HTTP/1.1 101");
            long until = System.nanoTime() + ATTACK.toNanos();
            int bursts = 0;
            int errors = 0;
            List<String> gaps = new ArrayList<>();
            boolean tookTurns = true;
            do { // bursts until the attack has lasted ATTACK
                // written by another thread: the replies must be read while the burst goes out
                Thread writer = Thread.ofPlatform().start(() -> {
                    try {
                        out.write(joins);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                });
                long first = 0;
                for (int replies = 0; replies < 10_000; replies++) {
                    String reply = readTextFrame(in);
                    if (first == 0) {
                        first = System.nanoTime();
                    }
                    if (reply.contains("\"error\"")) {
                        errors++;
                    }
                }
                long last = System.nanoTime();
                writer.join();
                // the longest the other client went unanswered while the loop answered the burst
                long gap = 0;
                long previous = first;
                for (long t : probe.answers()) {
                    if (t > first && t < last) {
                        gap = Math.max(gap, t - previous);
                        previous = t;
                    }
                }
                gap = Math.max(gap, last - previous);
                gaps.add(gap / 1_000_000 + " of " + (last - first) / 1_000_000 + " ms");
                tookTurns &= gap <= (last - first) / 3;
                // a turn is a read of ~230 joins: on a loaded machine longer than STALL_MS's share
                allowanceMs = Math.max(allowanceMs, (last - first) / 3_000_000);
                bursts++;
            } while (System.nanoTime() < until);
            System.out.printf(
                    "%d bursts of 10,000 joins in one write: %d refused; longest wait of the other client while the"
                            + " loop answered each burst: %s%n",
                    bursts, errors, gaps);
            assertThat(errors)
                    .as("joins beyond the limits are refused, not silently queued")
                    .isGreaterThan(0);
            // a loop that takes turns answers the other client every turn or two (of ~40 reads of
            // the burst: 8-18 % of the time here); one that reads the burst through holds it for
            // all of it, or half when the burst arrives in two parts (40-58 % here)
            assertThat(tookTurns)
                    .as("the other client waited at most a third of the time the loop answered each burst: %s", gaps)
                    .isTrue();
        }
    }

    /** The payload of the next server frame (unmasked, unfragmented) as text. */
    private static String readTextFrame(InputStream in) throws IOException {
        int b0 = in.read();
        int b1 = in.read();
        if (b0 < 0 || b1 < 0) {
            throw new IOException("connection closed");
        }
        long length = b1 & 0x7F;
        if (length == 126) {
            length = ((long) in.read() << 8) | in.read();
        } else if (length == 127) {
            length = ByteBuffer.wrap(in.readNBytes(8)).getLong();
        }
        byte[] payload = in.readNBytes((int) length);
        if (payload.length < length) {
            throw new IOException("connection closed inside a frame");
        }
        return new String(payload, StandardCharsets.UTF_8);
    }

    @Test
    void joinFloodAcrossSocketsDoesNotStallOthers() throws Exception {
        List<WsTestClient> flood = new ArrayList<>();
        for (int s = 0; s < 100; s++) {
            flood.add(connect());
        }
        long pause = ATTACK.toMillis() / 30; // the flood lasts ATTACK: a held loop would show
        for (int round = 0; round < 30; round++) {
            Thread.sleep(pause);
            for (int s = 0; s < flood.size(); s++) {
                flood.get(s)
                        .send("[\"" + round + "\",\"" + round + "\",\"realtime:flood-" + s + "-" + round
                                + "\",\"phx_join\",{\"config\":{}}]");
            }
        }
        // every join is answered (ok, or refused by the join rate or channel limit), none queued forever
        await().atMost(Duration.ofSeconds(10)).until(() -> flood.stream().allMatch(c -> c.received() >= 30));
        flood.forEach(WsTestClient::close);
    }

    @Test
    void slowlorisConnectionsAreClosedBeforeTheyHoldResources() throws Exception {
        List<Socket> loris = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            Socket s = new Socket("127.0.0.1", app.port());
            s.getOutputStream()
                    .write("GET /realtime/v1/websocket?vsn=2.0.0 HTTP/1.1\r\nHost: x\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
            loris.add(s);
        }
        long deadline = System.nanoTime()
                + FrontInitializer.FIRST_REQUEST_DEADLINE.plusSeconds(5).toNanos();
        int closed = 0;
        for (Socket s : loris) {
            s.setSoTimeout((int) Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
            try (InputStream in = s.getInputStream();
                    OutputStream out = s.getOutputStream()) {
                out.write("X-Slow: 1\r\n".getBytes(StandardCharsets.US_ASCII)); // one more dribble
                if (in.read() == -1) {
                    closed++;
                }
            } catch (java.net.SocketTimeoutException stillOpen) {
                break;
            } catch (java.io.IOException reset) {
                closed++;
            }
        }
        assertThat(closed)
                .as("incomplete handshakes closed after the first-request deadline")
                .isEqualTo(loris.size());
    }

    @Test
    void aClientThatNeverReadsIsDisconnectedAndOthersKeepGoing() throws Exception {
        Socket lazy = new Socket("127.0.0.1", app.port());
        lazy.setReceiveBufferSize(4096);
        OutputStream out = lazy.getOutputStream();
        String path = url().substring(url().indexOf("/realtime"));
        out.write(RawWebSocket.upgradeRequest(path));
        // wait for the 101: bytes sent before it would go to the HTTP codec
        assertThat(RawWebSocket.readUntil(lazy.getInputStream(), "\r\n\r\n")).startsWith("HTTP/1.1 101");
        out.write(RawWebSocket.maskedText(
                "[\"1\",\"1\",\"realtime:firehose\",\"phx_join\",{\"config\":{\"broadcast\":{\"self\":true}}}]"));
        await().atMost(Duration.ofSeconds(5))
                .alias("the join reply reached the lazy client's socket")
                .until(() -> lazy.getInputStream().available() > 0);
        WsTestClient sender = connect();
        sender.send("[\"1\",\"1\",\"realtime:firehose\",\"phx_join\",{\"config\":{}}]");
        String payload = "y".repeat(16 * 1024);
        boolean lazyClosed = false;
        // The bound is in bytes (2 MiB queued, or unwritable for 2 s), behind the kernel's socket
        // buffers (a few MiB on loopback): the deadline only ends a run that never gets there, so
        // it is generous for a loaded machine where the sender itself is slow.
        long deadline = System.nanoTime() + Duration.ofSeconds(45).toNanos();
        int sent = 0;
        while (System.nanoTime() < deadline && !lazyClosed) {
            // stay under the per-connection event rate: the point is the reader, not the sender
            sender.send("[\"1\",\"" + (++sent)
                    + "\",\"realtime:firehose\",\"broadcast\",{\"type\":\"broadcast\",\"event\":\"e\",\"payload\":{\"d\":\""
                    + payload + "\"}}]");
            while (sender.poll(Duration.ZERO) != null) {
                // drain the sender's own inbox
            }
            Thread.sleep(12); // paced: a firehose that loads the machine would slow the probe, not ws-front
            lazyClosed = isClosedByServer(lazy);
        }
        System.out.printf(
                "never-reading client: disconnected=%s after %d broadcasts of 16 KiB (%d bytes unread in its socket)%n",
                lazyClosed, sent, lazy.getInputStream().available());
        assertThat(lazyClosed)
                .as("a client that never reads is disconnected (bounded outbound queue)")
                .isTrue();
        sender.close();
        lazy.close();
    }

    private static boolean isClosedByServer(Socket s) throws java.io.IOException {
        // peeking would read; instead try a tiny write: after the server closed, writes fail (RST)
        try {
            s.getOutputStream().write(RawWebSocket.maskedPing());
            s.getOutputStream().flush();
            return false;
        } catch (java.io.IOException closed) {
            return true;
        }
    }
}
