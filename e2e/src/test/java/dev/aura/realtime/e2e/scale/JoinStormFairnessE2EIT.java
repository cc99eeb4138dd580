package dev.aura.realtime.e2e.scale;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.e2e.E2eStack;
import java.net.URI;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 23: a join storm of one project does not raise another project's join latency past
 * {@link #B_P95_BOUND_MS}. Project A sends {@value #A_CLIENTS} joins at once, each from its own
 * socket (half with one postgres_changes binding, half private channels whose read policy the
 * cdc-worker checks on A's tenant connection), and one more from a fresh socket as each is
 * answered, so {@value #A_CLIENTS} stay in flight until B is done (at most {@value #A_SOCKETS}
 * sockets); meanwhile project B joins {@value #B_CLIENTS} clients one after another, alternating
 * the same two kinds, and every one of B's joins must be answered while A still has joins in
 * flight (300 joins sent once were all answered within 0.5 s here, while B's 20 took 1.4 s). Each join is timed from {@code phx_join} to
 * SUBSCRIBED (the ok reply and, with a binding, the {@code system} "Subscribed to PostgreSQL"
 * push). B's same 20 joins on a quiet stack are printed beside them.
 *
 * <p>The bound: B's p95 (its second-slowest of 20) below 500 ms. A quiet join of either kind
 * takes tens of milliseconds here; 500 ms leaves room for a 2-core CI box shared with A's storm
 * (the processes themselves compete for CPU), yet is well below what queueing behind A's work
 * costs: A's 150 private read checks alone take 0.7–2.5 s on one tenant connection on this box
 * (bench figure 6), so a B join waiting behind them misses it. Both projects' limits are raised
 * in {@code aura_platform.project_limits} first (the free tier's 100 joins/s would refuse A).
 */
class JoinStormFairnessE2EIT {
    static final int A_CLIENTS = 300;
    static final int A_SOCKETS = 12 * A_CLIENTS;
    static final int B_CLIENTS = 20;
    static final long B_P95_BOUND_MS = 500;
    private static final Duration T = Duration.ofSeconds(30);

    private static E2eStack stack;
    private static final String projectB = UUID.randomUUID().toString();
    private static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        stack = E2eStack.startDefault(0);
        stack.createProject(projectB);
        for (String p : List.of(stack.projectId, projectB)) {
            Awaitility.await("realtime schema of " + p)
                    .atMost(T)
                    .until(() -> stack.pg
                            .queryOne("SELECT count(*) FROM aura_platform.projects WHERE project_id = '" + p
                                    + "' AND realtime_schema_version >= 1")
                            .equals("1"));
            String rt = "\"" + E2eStack.schemaOf(p) + "_realtime\"";
            stack.sql(
                    "CREATE POLICY room_reads ON " + rt + ".messages FOR SELECT TO aura_authenticated USING (" + rt
                            + ".topic() LIKE 'room:%' AND auth.uid() IS NOT NULL)",
                    "INSERT INTO aura_platform.project_limits(project_id, max_concurrent_users, max_joins_per_second)"
                            + " VALUES ('" + p + "', " + (A_SOCKETS + 100) + ", 2000)");
            stack.createEnabledTable(p, "feed", "(id bigserial PRIMARY KEY, body text)");
        }
        // started after the limits rows: a replica reads a project's row on its first connection
        stack.startWsFront(Map.of());
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static List<PhxSocket> open(String projectId, int n) throws Exception {
        URI uri = URI.create("ws://127.0.0.1:" + stack.wsPort(0) + "/realtime/v1/websocket?vsn=1.0.0&apikey="
                + stack.tokens.anon(projectId));
        List<PhxSocket> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(new PhxSocket(http, uri));
        }
        return out;
    }

    /** Even clients join a postgres_changes channel of their own, odd ones a private room. */
    private static void join(PhxSocket s, String projectId, String name, int i) {
        String token = stack.tokens.authenticated(projectId, UUID.randomUUID().toString());
        if (i % 2 == 0) {
            s.join("realtime:feed-" + name + "-" + i, PhxSocket.config("feed", false), token, true);
        } else {
            s.join("realtime:room:" + name + "-" + i, PhxSocket.config(null, true), token, false);
        }
    }

    /** A's joins: {@value #A_CLIENTS} at once, then one more as each is answered, until stopped. */
    private static final class Storm {
        private final List<PhxSocket> sockets;
        private final AtomicInteger answered = new AtomicInteger();
        private int sent;
        private boolean stopped;

        Storm(List<PhxSocket> sockets) {
            this.sockets = sockets;
        }

        void start() {
            for (int i = 0; i < A_CLIENTS; i++) {
                sendNext();
            }
        }

        private synchronized void sendNext() {
            if (stopped || sent >= sockets.size()) {
                return;
            }
            int i = sent++;
            PhxSocket s = sockets.get(i);
            s.joined.whenComplete((v, e) -> {
                answered.incrementAndGet();
                sendNext();
            });
            join(s, stack.projectId, "a", i);
        }

        /** A's joins sent and not answered yet (SUBSCRIBED or refused). */
        synchronized int pending() {
            return sent - answered.get();
        }

        /** Stops sending; the sockets whose joins were sent. */
        synchronized List<PhxSocket> stop() {
            stopped = true;
            return List.copyOf(sockets.subList(0, sent));
        }
    }

    /** B's clients one after another; each join's milliseconds. */
    private static long[] sequential(List<PhxSocket> sockets, String name) throws Exception {
        return sequential(sockets, name, () -> 0);
    }

    /**
     * B's clients one after another; each join's milliseconds. {@code pending[i]} gets what
     * {@code pendingNow} said when join {@code i} was answered.
     */
    private static long[] sequential(List<PhxSocket> sockets, String name, IntSupplier pendingNow, int... pending)
            throws Exception {
        long[] ms = new long[sockets.size()];
        for (int i = 0; i < sockets.size(); i++) {
            join(sockets.get(i), projectB, name, i);
            ms[i] = sockets.get(i).joined.get(T.toSeconds(), TimeUnit.SECONDS) / 1000;
            if (i < pending.length) {
                pending[i] = pendingNow.getAsInt();
            }
        }
        return ms;
    }

    private static long percentile(long[] values, double p) {
        long[] sorted = values.clone();
        Arrays.sort(sorted);
        return sorted[Math.max(0, (int) Math.ceil(p / 100 * sorted.length) - 1)];
    }

    private static String describe(long[] ms) {
        return String.format(
                "n=%d p50 %d / p95 %d / max %d ms",
                ms.length, percentile(ms, 50), percentile(ms, 95), percentile(ms, 100));
    }

    @Test
    void aJoinStormOfOneProjectLeavesAnotherProjectsJoinsFast() throws Exception {
        List<PhxSocket> aSockets = open(stack.projectId, A_SOCKETS);
        List<PhxSocket> bQuiet = open(projectB, B_CLIENTS);
        List<PhxSocket> bStorm = open(projectB, B_CLIENTS);
        try {
            long[] quiet = sequential(bQuiet, "quiet");

            Storm storm = new Storm(aSockets);
            long stormStart = System.nanoTime();
            storm.start();
            int[] aPendingAtB = new int[B_CLIENTS];
            long[] during = sequential(bStorm, "storm", storm::pending, aPendingAtB);
            double bDoneS = (System.nanoTime() - stormStart) / 1e9;
            List<PhxSocket> a = storm.stop();
            CompletableFuture.allOf(a.stream()
                            .map(s -> s.joined.exceptionally(e -> -1L))
                            .toArray(CompletableFuture[]::new))
                    .get(60, TimeUnit.SECONDS);
            double aDoneS = (System.nanoTime() - stormStart) / 1e9;
            long[] aMs = a.stream()
                    .filter(s -> !s.joined.isCompletedExceptionally())
                    .mapToLong(s -> s.joined.join() / 1000)
                    .toArray();
            long aRefused = a.size() - aMs.length;

            System.out.printf(
                    "join storm fairness: A %d joins (%d in flight): %s, %d refused, all answered after %.2f s%n"
                            + "  B quiet, one after another: %s%n"
                            + "  B during A's storm: %s (B's last join done %.2f s into the storm)%n"
                            + "  B's joins (ms, even: a binding, odd: private): %s%n"
                            + "  A's joins still unanswered as each of B's was answered: %s%n"
                            + "  bound: B's p95 during the storm < %d ms%n",
                    a.size(),
                    A_CLIENTS,
                    aMs.length > 0 ? describe(aMs) : "none SUBSCRIBED",
                    aRefused,
                    aDoneS,
                    describe(quiet),
                    describe(during),
                    bDoneS,
                    Arrays.toString(during),
                    Arrays.toString(aPendingAtB),
                    B_P95_BOUND_MS);
            if (aRefused > 0) {
                a.stream()
                        .filter(s -> s.joined.isCompletedExceptionally())
                        .findFirst()
                        .ifPresent(s -> s.joined.exceptionally(e -> {
                            System.out.println("  A's first refusal: " + e);
                            return -1L;
                        }));
            }
            // the bound says something only if B joined while A's storm was still being answered
            assertThat(Arrays.stream(aPendingAtB).boxed().toList())
                    .as("A's joins still unanswered as each of B's joins was answered")
                    .allMatch(n -> n > 0);
            assertThat(percentile(during, 95))
                    .as("project B's p95 join latency during A's join storm (ms)")
                    .isLessThan(B_P95_BOUND_MS);
            assertThat(aRefused).as("A's refused joins").isZero();
        } finally {
            for (List<PhxSocket> l : List.of(aSockets, bQuiet, bStorm)) {
                l.forEach(PhxSocket::close);
            }
        }
    }
}
