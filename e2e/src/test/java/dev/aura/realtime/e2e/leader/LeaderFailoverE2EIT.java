package dev.aura.realtime.e2e.leader;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PartitionableProxy;
import dev.aura.realtime.testkit.Ports;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RegistryEntries;
import dev.aura.realtime.testkit.ServiceProcess;
import dev.aura.realtime.testkit.Waits;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leader election with the real pipeline (docs/design.md C1): two cdc-worker jars on one slot and one
 * Lease served by fabric8's KubernetesMockServer in CRUD mode (resourceVersion enforced, so the
 * campaigns really race), a steady insert load, and a NATS subscriber that records which worker
 * published each change.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@ValueSource(strings = {"stream", "poll"})
class LeaderFailoverE2EIT {
    @Parameter
    String source;

    private static final int LEASE_SECONDS = 2; // retry period 0.67 s, renew deadline 1.6 s
    private final ObjectMapper json = WireJson.mapper();
    private final PostgresServer pg = PostgresServer.shared();
    private final NatsServer natsServer = NatsServer.shared();
    private KubernetesMockServer api;
    private final Map<String, PartitionableProxy> proxies = new HashMap<>();
    private E2eStack stack;
    private Connection nats;
    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final Map<String, ServiceProcess> workers = new HashMap<>();
    private final Map<String, Integer> ports = new HashMap<>();
    private final String lease = "aura-e2e-" + UUID.randomUUID().toString().substring(0, 8);
    private final AtomicBoolean loading = new AtomicBoolean();
    private final AtomicInteger committed = new AtomicInteger();
    private Thread load;

    record Event(String origin, String eventId, long epoch, int id, long atNanos) {}

    @BeforeEach
    void setUp() throws Exception {
        api = new KubernetesMockServer(
                new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
        api.init();
        proxies.put("a", new PartitionableProxy(api.getPort()));
        proxies.put("b", new PartitionableProxy(api.getPort()));
        stack = new E2eStack(pg, natsServer);
        nats = natsServer.connect();
        Dispatcher d = nats.createDispatcher(msg -> {
            try {
                JsonNode body = json.readTree(msg.getData());
                events.add(new Event(
                        msg.getHeaders().getFirst(AuraHeaders.ORIGIN),
                        msg.getHeaders().getFirst(AuraHeaders.EVENT_ID),
                        Long.parseLong(msg.getHeaders().getFirst(AuraHeaders.LEASE_EPOCH)),
                        body.get("data").get("record").get("id").asInt(),
                        System.nanoTime()));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        d.subscribe(Subjects.CHANGES + "." + stack.projectId + ".>");
        start("a");
        start("b");
        stack.createProject();
        stack.sql(
                "CREATE TABLE " + stack.table("ticks") + "(id int PRIMARY KEY)",
                "INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + stack.projectId
                        + "', 'ticks')");
        RegistryEntries.put(
                nats,
                RegistryEntries.binding(
                        stack.projectId, "ticks", RegistryEntries.claims("service_role", stack.projectId), "test"));
    }

    /** Starts worker {@code name}; it reaches the API server through its own proxy, which the test can cut. */
    private void start(String name) {
        int apiPort = proxies.get(name).port();
        int port = Ports.forService();
        Map<String, String> env = stack.cdcEnv();
        env.put("CDC_HTTP_PORT", Integer.toString(port));
        env.put("CDC_SOURCE", source);
        env.put("LEADER_ELECTION", "kubernetes");
        env.put("LEASE_NAME", lease);
        env.put("LEASE_NAMESPACE", "test");
        env.put("LEASE_DURATION_SECONDS", Integer.toString(LEASE_SECONDS));
        env.put("POD_NAME", name);
        env.put("KUBERNETES_MASTER", "http://localhost:" + apiPort + "/");
        env.put("KUBERNETES_AUTH_TRYKUBECONFIG", "false");
        env.put("KUBERNETES_AUTH_TRYSERVICEACCOUNT", "false");
        env.put("KUBERNETES_HTTP2_DISABLE", "true");
        workers.put(name, ServiceProcess.startJar("cdc-" + name, Jars.cdcWorker(), env, List.of("-Xmx256m")));
        ports.put(name, port);
        awaitHealth(name, "\"status\":\"ok\"", Duration.ofSeconds(60));
    }

    /** {@code /health} of worker {@code name}, spaces removed. */
    private String health(String name) {
        return stack.health(ports.get(name)).replace(" ", "");
    }

    private void awaitHealth(String name, String fragment, Duration timeout) {
        stack.http(ports.get(name)).awaitHealth(fragment, timeout, workers.get(name));
    }

    /**
     * Inserts probe rows (negative ids, outside the load's range) until one is published: the
     * leader then watches the table (it refreshes its table list every 300 ms; rows committed
     * before are skipped by design).
     */
    private void awaitTableWatched() {
        AtomicInteger probe = new AtomicInteger();
        Waits.until(
                "a probe row published",
                Duration.ofSeconds(20),
                Duration.ofMillis(300),
                () -> {
                    if (events.stream().anyMatch(e -> e.id() < 0)) {
                        return true;
                    }
                    stack.sql("INSERT INTO " + stack.table("ticks") + " VALUES (" + -probe.incrementAndGet() + ")");
                    return false;
                },
                () -> "events " + events.size());
    }

    /** When {@code origin} first published at index {@code mark} or later ({@link System#nanoTime()}). */
    private long firstPublishBy(String origin, int mark) {
        return events.stream() // a snapshot: the list grows while we read
                .skip(mark)
                .filter(e -> e.origin().equals(origin))
                .mapToLong(Event::atNanos)
                .min()
                .orElseThrow();
    }

    /** Waits until {@code origin} published {@code count} events at index {@code mark} or later. */
    private void awaitPublishing(String origin, int mark, int count) {
        Waits.until(
                count + " events by " + origin,
                Duration.ofSeconds(20),
                Duration.ofMillis(20),
                () -> events.stream()
                                .skip(mark)
                                .filter(e -> e.origin().equals(origin))
                                .count()
                        >= count,
                () -> "events " + events.size());
    }

    private void startLoad() {
        loading.set(true);
        load = Thread.ofPlatform().name("insert-load").start(() -> {
            try (var c = pg.connect();
                    var st = c.prepareStatement("INSERT INTO " + stack.table("ticks") + " VALUES (?)")) {
                while (loading.get()) {
                    st.setInt(1, committed.get() + 1);
                    st.executeUpdate();
                    committed.incrementAndGet();
                    Thread.sleep(10); // ~100 rows/s
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private void stopLoad() throws InterruptedException {
        loading.set(false);
        load.join();
    }

    private String leader() {
        List<String> leaders = new ArrayList<>();
        for (var e : ports.entrySet()) {
            if (workers.get(e.getKey()).isAlive() && health(e.getKey()).contains("\"leader\":true")) {
                leaders.add(e.getKey());
            }
        }
        assertThat(leaders).as("leaders").hasSizeLessThanOrEqualTo(1);
        return leaders.isEmpty() ? null : leaders.get(0);
    }

    private String originOf(String worker) {
        return health(worker).replaceAll(".*\"instance\":\"([^\"]+)\".*", "$1");
    }

    private void assertEverythingCommittedArrived() {
        Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            Set<Integer> missing = range(committed.get());
            missing.removeAll(ids());
            assertThat(missing)
                    .as("committed rows never published (of %d)", committed.get())
                    .isEmpty();
        });
        Map<String, Set<Integer>> rowsById = new HashMap<>();
        for (Event e : events) {
            rowsById.computeIfAbsent(e.eventId(), k -> new HashSet<>()).add(e.id());
        }
        assertThat(rowsById.values())
                .as("a duplicated event id always carries the same row")
                .allMatch(s -> s.size() == 1);
    }

    private Set<Integer> ids() {
        return events.stream().map(Event::id).collect(Collectors.toSet());
    }

    private static Set<Integer> range(int n) {
        Set<Integer> s = new HashSet<>();
        for (int i = 1; i <= n; i++) {
            s.add(i);
        }
        return s;
    }

    /** Publishing intervals of different origins never overlap: each origin's events form one run per term. */
    private void assertNoOverlap() {
        List<Event> sorted = new ArrayList<>(events);
        sorted.sort((x, y) -> Long.compare(x.atNanos(), y.atNanos()));
        List<String> runs = new ArrayList<>();
        for (Event e : sorted) {
            String key = e.origin() + "#" + e.epoch();
            if (runs.isEmpty() || !runs.get(runs.size() - 1).equals(key)) {
                runs.add(key);
            }
        }
        assertThat(runs).as("terms in publishing order").doesNotHaveDuplicates();
    }

    @Test
    void oneLeaderPublishes_killedLeaderIsReplaced_gracefulStopHandsOverFast_fencedLeaderStopsBeforeTheLeaseExpires()
            throws Exception {
        // 1. Two workers, one lease: exactly one leads and publishes.
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> leader() != null);
        // The slot exists once the leader polled: rows committed before it would never be in it.
        awaitHealth(leader(), "\"cdc_active\":true", Duration.ofSeconds(20));
        awaitTableWatched();
        startLoad();
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> events.size() > 50);
        String first = leader();
        assertThat(events.stream().map(Event::origin).distinct()).containsExactly(originOf(first));

        // 2. Kill -9 the leader (no release): the standby takes over within lease + retry (+ jitter), nothing missing.
        String standby = first.equals("a") ? "b" : "a";
        String standbyOrigin = originOf(standby);
        long killed = System.nanoTime();
        workers.get(first).kill9();
        awaitPublishing(standbyOrigin, 0, 1);
        long takeoverMs = (firstPublishBy(standbyOrigin, 0) - killed) / 1_000_000;
        System.out.printf("kill -9 takeover: standby published %d ms after the kill%n", takeoverMs);
        // The outcome: the standby took over (awaitPublishing's 20 s bounds a hang) with nothing
        // missing and no overlap (below). The time (lease + up to 2.2 x retry + the poll loop's
        // start) is printed: on a loaded machine any tight bound would race the clock.
        stopLoad();
        assertEverythingCommittedArrived();
        assertNoOverlap();

        // 3. Restart the killed one (standby now); graceful stop of the leader releases the lease: takeover < 2 s.
        start(first);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> standby.equals(leader()));
        // The restarted worker is a standby once it has seen the lease held by the other.
        awaitHealth(first, "\"holder\":\"" + standby + "\"", Duration.ofSeconds(30));
        int loadMark = events.size();
        startLoad();
        awaitPublishing(standbyOrigin, loadMark, 50);
        long stopping = System.nanoTime();
        String firstOrigin = originOf(first);
        int before = events.size();
        Thread stopper = Thread.ofPlatform().start(() -> workers.get(standby).stop());
        Awaitility.await()
                .atMost(Duration.ofSeconds(30))
                .pollInterval(Duration.ofMillis(20))
                .until(() -> health(first).contains("\"leader\":true"));
        long gracefulMs = (System.nanoTime() - stopping) / 1_000_000;
        stopper.join();
        awaitPublishing(firstOrigin, before, 1);
        long publishingMs = (firstPublishBy(firstOrigin, before) - stopping) / 1_000_000;
        System.out.printf(
                "graceful takeover: lease taken %d ms, first publish %d ms after SIGTERM%n", gracefulMs, publishingMs);
        // Measured from the SIGTERM to a separate JVM: its shutdown hook stops the slot reader,
        // then releases; the standby takes the lease on its next jittered retry (<= 2.2 x 667 ms).
        // Printed, not asserted: JVM shutdown on a loaded machine has no bound worth racing, and
        // the release itself (the lease rewritten to a 1 s duration by close()) is asserted in
        // LeaseLeaderElectionTest. The outcome asserted here: nothing missing, no overlap.
        stopLoad();
        assertEverythingCommittedArrived();
        assertNoOverlap();

        // 4. The API server becomes unreachable for the leader mid-term: it stops publishing before its
        //    lease could have expired for the other, which takes over; after the network heals the old
        //    leader is a standby, and it resumes when it re-acquires.
        String leader = first;
        String other = standby;
        start(other);
        awaitHealth(other, "\"holder\":\"" + leader + "\"", Duration.ofSeconds(30));
        String leaderOrigin = originOf(leader);
        String otherOrigin = originOf(other);
        loadMark = events.size();
        startLoad();
        awaitPublishing(leaderOrigin, loadMark, 50);
        long cut = System.nanoTime();
        proxies.get(leader).cut();
        Awaitility.await()
                .atMost(Duration.ofSeconds(20))
                .until(() -> events.stream().anyMatch(e -> e.origin().equals(otherOrigin) && e.atNanos() > cut));
        long lastByOld = events.stream()
                .filter(e -> e.origin().equals(leaderOrigin))
                .mapToLong(Event::atNanos)
                .max()
                .orElseThrow();
        long firstByNew = events.stream()
                .filter(e -> e.origin().equals(otherOrigin) && e.atNanos() > cut)
                .mapToLong(Event::atNanos)
                .min()
                .orElseThrow();
        System.out.printf(
                "API cut: old leader's last publish %d ms after the cut, new leader's first %d ms after%n",
                (lastByOld - cut) / 1_000_000, (firstByNew - cut) / 1_000_000);
        assertThat(lastByOld)
                .as("the fenced leader stopped before the new one started")
                .isLessThan(firstByNew);
        // (that the fence stops the work before the lease is free for others, by the lease's own
        // renew time, is asserted in LeaseLeaderElectionTest; here the times are those the test's
        // subscriber received the events, which a loaded machine delays)
        assertThat(health(leader)).contains("\"leader\":false");

        proxies.get(leader).heal();
        awaitHealth(leader, "\"holder\":\"" + other + "\"", Duration.ofSeconds(20));
        int mark = events.size();
        workers.get(other).stop();
        awaitPublishing(leaderOrigin, mark, 1);
        stopLoad();
        assertEverythingCommittedArrived();
        assertNoOverlap();
    }

    @AfterEach
    void tearDown() throws Exception {
        if (load != null) {
            loading.set(false);
            load.join();
        }
        workers.values().forEach(ServiceProcess::close);
        nats.close();
        proxies.values().forEach(PartitionableProxy::close);
        api.destroy();
        stack.close();
    }
}
