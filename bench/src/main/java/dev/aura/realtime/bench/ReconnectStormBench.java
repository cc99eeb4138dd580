package dev.aura.realtime.bench;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Figure 9 (issue 23): a reconnect storm. Two ws-front replicas; {@code clients} realtime-js
 * protocol clients (vsn 1.0.0) connect to replica 1 and join one postgres_changes channel
 * ({@code event '*'} on {@code public.}{@value #TABLE}) with {@code postgres_changes_options:
 * {wait: true, timeout: 5000}}, each SUBSCRIBED once it has the ok reply and the {@code system}
 * "Subscribed to PostgreSQL" push. A writer commits one row every {@code 1000/rowsPerSecond} ms
 * ({@link StormWriter}). Replica 1 is killed with SIGKILL; every client sees its socket close and
 * reconnects to replica 2 on realtime-js's schedule ({@link StormClient#reconnectAfterMs}), joins
 * again, and is SUBSCRIBED again. Reported: the time from the kill until the last client is
 * SUBSCRIBED again (and the per-client p50/p95), against the baseline of the same clients' first
 * connect and join to replica 1 in the same run ({@value #IN_FLIGHT} clients connecting or
 * joining at a time, each starting when one before it is SUBSCRIBED).
 *
 * <p>Asserted (the figure fails otherwise): every row whose INSERT started after a client's
 * SUBSCRIBED reached that client, for both windows where it is owed: after the first SUBSCRIBED up
 * to {@link #GRACE_MS} before the kill (rows committed in that last second may die in the killed
 * replica's buffers), and after the second SUBSCRIBED until the writer stops. Rows committed
 * while a client was disconnected are not owed (postgres_changes has no replay) and are counted
 * only. The project's limits are raised to 3× {@code clients} users (the dead replica's last usage
 * report still counts for a few seconds) and 10,000 joins/s.
 */
final class ReconnectStormBench {
    static final String TABLE = "bench_storm";
    static final long WAIT_MS = 5_000;
    static final long TARGET_MS = 10_000;
    /** Rows whose commit finished within this long before the kill are not owed to anyone. */
    static final long GRACE_MS = 1_000;
    /** Clients connecting and joining at once in the first phase (the baseline). */
    static final int IN_FLIGHT = 128;

    private final Stack s;
    private final Report report;

    ReconnectStormBench(Stack s, Report report) {
        this.s = s;
        this.report = report;
    }

    static void createTable(Stack s) {
        s.pg.execute(
                "CREATE TABLE IF NOT EXISTS " + s.table(TABLE) + "(id bigserial PRIMARY KEY, note text)",
                "GRANT SELECT ON " + s.table(TABLE) + " TO aura_anon, aura_authenticated");
        s.enable(TABLE);
    }

    /** Starts two replicas of its own, kills the first; needs a running worker and {@link #createTable}. */
    void run(int wanted, int rowsPerSecond) throws Exception {
        // this JVM and each replica hold one descriptor per socket
        int clients = LoopbackSources.capToOpenFiles(wanted);
        if (clients < wanted) {
            report.note("reconnect storm: " + clients + " clients instead of " + wanted + " (open files limit "
                    + LoopbackSources.openFilesLimit() + ")");
        }
        s.projectLimits(3 * clients, 10_000);
        Map<String, String> env = Map.of("WS_MAX_JOINS_PER_SECOND", "1000000", "WS_IDLE_TIMEOUT_MS", "3600000");
        Stack.Replica r1 = s.startReplica("ws-front-reconnect-1", env, List.of());
        Stack.Replica r2 = s.startReplica("ws-front-reconnect-2", env, List.of());
        String config = PhxFrames.config(TABLE, false, WAIT_MS);
        try (WsClients ws = new WsClients(1, true);
                StormWriter writer = new StormWriter(s, TABLE, rowsPerSecond)) {
            URI second = s.wsUri(r2.port(), "1.0.0");
            List<StormClient> all = new ArrayList<>(clients);
            Map<String, LongAdder> refusals = new ConcurrentHashMap<>();
            for (int i = 0; i < clients; i++) {
                all.add(new StormClient(
                        ws,
                        i,
                        config,
                        second,
                        reason -> refusals.computeIfAbsent(reason, r -> new LongAdder())
                                .increment()));
            }
            WsClients.Listener listener = new WsClients.Listener() {
                @Override
                public void onText(WsClients.Conn conn, io.netty.buffer.ByteBuf text) {
                    all.get(conn.index).onFrame(conn, text.toString(StandardCharsets.UTF_8));
                }

                @Override
                public void onClose(WsClients.Conn conn) {
                    all.get(conn.index).onClose(conn);
                }
            };
            all.forEach(c -> c.listener(listener));

            long t0 = System.nanoTime();
            URI first = s.wsUri(r1.port(), "1.0.0");
            Semaphore window = new Semaphore(IN_FLIGHT);
            for (StormClient c : all) {
                if (!window.tryAcquire(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException(IN_FLIGHT + " clients not SUBSCRIBED within 60 s");
                }
                c.start(first, window::release);
            }
            for (StormClient c : all) {
                c.awaitSubscribed(1, 60_000);
            }
            double initialS = (System.nanoTime() - t0) / 1e9;

            writer.start();
            Procs.sleep(2_000);
            long killAt = System.nanoTime();
            r1.process().kill9();
            long deadline = killAt + 60_000_000_000L;
            int missing = clients;
            while (System.nanoTime() < deadline) {
                missing = (int) all.stream().filter(c -> c.subscribedAt(2) == 0).count();
                if (missing == 0) {
                    break;
                }
                Procs.sleep(50);
            }
            long lastAt = all.stream().mapToLong(c -> c.subscribedAt(2)).max().orElse(0);
            Stats again = new Stats();
            all.stream()
                    .filter(c -> c.subscribedAt(2) != 0)
                    .forEach(c -> again.add((c.subscribedAt(2) - killAt) / 1000));
            Procs.sleep(3_000);
            writer.stop();
            Procs.sleep(3_000); // drain what is in flight

            long owed = 0;
            long lost = 0;
            AtomicInteger lossyClients = new AtomicInteger();
            long notOwed = 0;
            long killGrace = killAt - GRACE_MS * 1_000_000;
            for (StormClient c : all) {
                long[] counts = c.check(writer, killGrace);
                owed += counts[0];
                lost += counts[1];
                notOwed += counts[2];
                if (counts[1] > 0) {
                    lossyClients.incrementAndGet();
                }
            }
            double allS = missing == 0 ? (lastAt - killAt) / 1e9 : Double.NaN;
            if (!refusals.isEmpty()) {
                StringBuilder why = new StringBuilder("reconnect storm: joins refused or unanswered, by reply: ");
                refusals.entrySet().stream()
                        .sorted((a, b) ->
                                Long.compare(b.getValue().sum(), a.getValue().sum()))
                        .limit(5)
                        .forEach(e -> why.append(e.getValue().sum())
                                .append(" × ")
                                .append(e.getKey())
                                .append("; "));
                report.note(why.toString());
            }
            if (lost > 0) {
                report.note("reconnect storm: " + lost + " owed deliveries lost on " + lossyClients + " clients, e.g. "
                        + all.stream()
                                .filter(c -> c.lost() > 0)
                                .findFirst()
                                .map(StormClient::describeLoss)
                                .orElse(""));
            }
            report.row(
                    "9. reconnect storm: " + clients + " clients, replica killed (SIGKILL), " + rowsPerSecond
                            + " rows/s",
                    String.format(
                            "%s SUBSCRIBED again %s s after the kill (per client: %s), %d reconnects refused or retried; "
                                    + "%d of %d owed deliveries lost (%d rows/s × clients; %d committed while disconnected, not owed)",
                            missing == 0 ? "all" : (clients - missing) + "/" + clients,
                            missing == 0 ? Report.f2(allS) : "> 60",
                            again.summary(),
                            all.stream().mapToInt(StormClient::retries).sum(),
                            lost,
                            owed,
                            rowsPerSecond,
                            notOwed),
                    String.format(
                            "first connect + join of the same %d clients to replica 1: %.2f s", clients, initialS),
                    String.format("%.2f×", allS / initialS),
                    "all SUBSCRIBED again ≤ " + TARGET_MS / 1000 + " s, nothing lost",
                    missing == 0 && allS * 1000 <= TARGET_MS && lost == 0 && owed > 0);
            ws.closeAll(all.stream().map(StormClient::conn).toList());
        } finally {
            r1.process().stop();
            r2.process().stop();
        }
    }
}
