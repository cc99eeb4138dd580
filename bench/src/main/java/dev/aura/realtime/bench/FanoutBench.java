package dev.aura.realtime.bench;

import dev.aura.realtime.testkit.NatsServer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongConsumer;

/**
 * Figure 3: one ws-front, N WebSocket clients joined to one channel, 200-byte broadcasts sent by
 * one more client; versus nats-server delivering the same 200-byte messages to N plain NATS
 * subscriber connections. Servers (ws-front, nats-server) are pinned to CPU 0, this load
 * generator to CPU 1. Throughput: a burst at an offered rate above capacity, deliveries divided by
 * (last receipt − first send). Latency: a lighter run, sampled on every 25th client (send and
 * receive happen in this JVM, so System.nanoTime is the clock).
 */
final class FanoutBench {
    private static final byte[] T_KEY = "\"t\":".getBytes(StandardCharsets.US_ASCII);
    private static final int SAMPLE_EVERY = 25;
    /** Issue 19's target, per burst round: deliveries/s of ws-front on one core, and against raw NATS. */
    static final Target TARGET = Target.of(
            Target.atLeast("value", "", 50_000, "deliveries/s on 1 core"),
            Target.atLeast("ratio", "", 0.5, "× raw NATS"));

    /** Replaced by the profile summary once ws-front has dumped its recording (after the last phase that uses it). */
    static final String FANOUT_JFR_PLACEHOLDER = "@@ws-front-fanout-jfr@@";

    private final Stack s;
    private final Report report;
    private final AtomicLong delivered = new AtomicLong();
    private volatile long lastReceipt;
    private volatile Stats latency = new Stats();

    FanoutBench(Stack s, Report report) {
        this.s = s;
        this.report = report;
    }

    /** The 200-byte JSON object every message carries: {"t":<nanoTime>,"pad":"..."} */
    static String payload(long t) {
        String head = "{\"t\":" + t + ",\"pad\":\"";
        return head + "x".repeat(200 - head.length() - 2) + "\"}";
    }

    private void onMessage(int index, ByteBuf buf) {
        int at = ByteBufUtil.indexOf(Unpooled.wrappedBuffer(T_KEY), buf);
        if (at < 0) {
            return;
        }
        long now = System.nanoTime();
        delivered.incrementAndGet();
        lastReceipt = now;
        if (index % SAMPLE_EVERY == 0) {
            long t = 0;
            for (int i = at + T_KEY.length; i < buf.writerIndex(); i++) {
                byte b = buf.getByte(i);
                if (b < '0' || b > '9') {
                    break;
                }
                t = t * 10 + (b - '0');
            }
            latency.add((now - t) / 1000);
        }
    }

    record Run(double deliveriesPerSecond, long delivered, long expected, Stats latency) {}

    /** Sends {@code rate} messages/s for {@code seconds} with {@code send}; waits for delivery to settle. */
    private Run measure(int subscribers, int rate, int seconds, LongConsumer send) {
        delivered.set(0);
        latency = new Stats();
        long total = (long) rate * seconds;
        long periodNs = 1_000_000_000L / rate;
        long start = System.nanoTime();
        for (long i = 0; i < total; i++) {
            long due = start + i * periodNs;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(wait);
            }
            send.accept(System.nanoTime());
        }
        long expected = total * subscribers;
        Progress.await(delivered::get, expected, Duration.ofSeconds(5), Duration.ofMinutes(10));
        double secs = (lastReceipt - start) / 1e9;
        return new Run(delivered.get() / secs, delivered.get(), expected, latency);
    }

    /**
     * Bursts alternate between ws-front and raw NATS ({@code rounds} of each, both client sets
     * connected throughout), so load from other work on this machine hits both sides alike; the
     * figure is the median round (and the median of the per-round ratios), every round listed.
     */
    void run(
            int subscribers,
            int burstRate,
            int burstSeconds,
            int lightRate,
            int lightSeconds,
            int rounds,
            long frontPid,
            long natsPid,
            Path frontJfr)
            throws Exception {
        List<Run> wsBursts = new java.util.ArrayList<>();
        List<Run> natsBursts = new java.util.ArrayList<>();
        Run wsLight;
        Run natsLight;
        int unexpectedCloses;
        double shedBefore = s.frontMetric("aura_ws_overload_shed_total");
        double slowBefore = s.frontMetric("aura_ws_slow_clients_dropped_total");
        try (WsClients clients = new WsClients(1);
                RawNatsClients subs = new RawNatsClients(1)) {
            List<WsClients.Conn> conns =
                    clients.connectMany(s.wsUri("1.0.0"), subscribers + 1, 200, (c, t) -> onMessage(c.index, t));
            clients.joinAll(conns, "realtime:fan", WsClients.broadcastConfig(), 200);
            NatsServer.User user = NatsServer.User.TEST;
            subs.subscribeMany(
                    s.nats.port(),
                    user.userName(),
                    s.nats.env(user).get("NATS_PASSWORD"),
                    "bench.fan",
                    subscribers,
                    200,
                    this::onMessage);
            WsClients.Conn sender =
                    conns.get(subscribers); // index = subscribers: never sampled twice, receives nothing (self:false)
            AtomicLong ref = new AtomicLong(10);
            LongConsumer wsSend = t -> sender.send(
                    "{\"topic\":\"realtime:fan\",\"event\":\"broadcast\",\"payload\":{\"type\":\"broadcast\","
                            + "\"event\":\"e\",\"payload\":" + payload(t) + "},\"ref\":\"" + ref.incrementAndGet()
                            + "\",\"join_ref\":\"1\"}");
            LongConsumer natsSend =
                    t -> s.client.publish("bench.fan", payload(t).getBytes(StandardCharsets.UTF_8));
            Procs.sleep(1000); // let the servers settle after the connections before measuring
            measure(subscribers, 5, 1, wsSend); // warm-up
            measure(subscribers, 5, 1, natsSend);
            for (int round = 0; round < rounds; round++) {
                wsBursts.add(measure(subscribers, burstRate, burstSeconds, wsSend));
                natsBursts.add(measure(subscribers, burstRate, burstSeconds, natsSend));
            }
            wsLight = measure(subscribers, lightRate, lightSeconds, wsSend);
            natsLight = measure(subscribers, lightRate, lightSeconds, natsSend);
            unexpectedCloses = clients.closedUnexpectedly.get();
            clients.closeAll(conns);
        }
        Rounds fan = new Rounds(
                "3. fan-out, " + subscribers + " WS clients, 200 B broadcasts (burst " + burstRate + " msg/s × "
                        + burstSeconds + " s, " + rounds + " alternating rounds)",
                "deliveries/s",
                "raw NATS");
        for (int i = 0; i < rounds; i++) {
            Run w = wsBursts.get(i);
            Run n = natsBursts.get(i);
            // a round is valid only when every delivery was made, on both sides
            fan.add(
                            Sample.of(w.deliveriesPerSecond()).counted(w.expected(), w.delivered()),
                            Sample.of(n.deliveriesPerSecond()).counted(n.expected(), n.delivered()),
                            String.format(
                                    "burst p99 %.0f ms vs raw NATS %.0f ms",
                                    w.latency().percentileMs(99), n.latency().percentileMs(99)))
                    .metric("p99", w.latency().percentileMs(99))
                    .metric("raw p99", n.latency().percentileMs(99));
        }
        double wsP99 = fan.medianMetric("p99");
        double natsP99 = fan.medianMetric("raw p99");
        Target.Verdict verdict = TARGET.judge(fan);
        boolean met = verdict.met();
        report.row(
                fan,
                String.format("on 1 core; median burst p99 %.0f ms (%.2f× raw's)", wsP99, wsP99 / natsP99),
                "raw NATS, " + subscribers + " subscribers, same rounds: median "
                        + Report.f0(fan.medianBaseline()) + " deliveries/s, median burst p99 "
                        + String.format("%.0f", natsP99) + " ms",
                TARGET,
                verdict);
        report.info(
                "3. fan-out latency at " + lightRate + " msg/s (" + Report.f0((double) lightRate * subscribers)
                        + " deliveries/s offered, one run)",
                wsLight.latency().summary() + "; " + wsLight.delivered() + "/" + wsLight.expected()
                        + (wsLight.delivered() == wsLight.expected() ? "" : " INCOMPLETE"),
                "raw NATS " + natsLight.latency().summary() + "; " + natsLight.delivered() + "/" + natsLight.expected(),
                "–",
                "– (no target)");
        double shed = s.frontMetric("aura_ws_overload_shed_total") - shedBefore;
        double slow = s.frontMetric("aura_ws_slow_clients_dropped_total") - slowBefore;
        if (unexpectedCloses > 0 || shed > 0 || slow > 0) {
            report.note("fan-out: " + unexpectedCloses + " WebSocket clients were closed by the server during the"
                    + " run (" + Report.f0(shed) + " by the event loop queue's bound, WS_MAX_QUEUE_DELAY_MS/BYTES; "
                    + Report.f0(slow) + " as slow clients)");
        }
        if (!met && s.profile) {
            report.evidence(
                    "Fan-out miss: ws-front profile (pinned to CPU 0)",
                    FANOUT_JFR_PLACEHOLDER + "\nReproduce: `jfr print --events jdk.ExecutionSample " + frontJfr
                            + "`.\n");
        }
    }
}
