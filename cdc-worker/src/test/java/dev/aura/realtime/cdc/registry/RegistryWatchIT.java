package dev.aura.realtime.cdc.registry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.RegistryEntries;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.nats.client.Connection;
import io.nats.client.ConnectionListener;
import io.nats.client.KeyValue;
import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The cdc-worker's registry view on a real nats-server of its own (forged entries stay in its
 * bucket): no entry is trusted, and a batch is matched only against a view that holds every
 * acknowledged write (docs/design.md C8).
 */
class RegistryWatchIT {
    private static final ObjectMapper JSON = WireJson.mapper();
    private static NatsServer nats;
    private static Connection front;
    private static Connection worker;

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private RegistryWatch watch;

    @BeforeAll
    static void startNats() {
        nats = NatsServer.start();
        front = nats.connect(NatsServer.User.WS_FRONT);
        worker = nats.connect(NatsServer.User.CDC_WORKER);
    }

    @AfterAll
    static void stopNats() throws InterruptedException {
        front.close();
        worker.close();
        nats.close();
    }

    @AfterEach
    void closeWatch() {
        if (watch != null) {
            watch.close();
        }
    }

    @Test
    void noBatchIsMatchedBeforeTheFirstLoad() throws Exception {
        KvBuckets.ensure(front, KvBuckets.registry(BUCKET_BYTES));
        watch = newWatch();
        assertThatThrownBy(watch::awaitCurrent).isInstanceOf(CdcFailure.class).hasMessageContaining("not loaded yet");
        watch.start();
        watch.awaitCurrent();
    }

    @Test
    void aBindingAcknowledgedBeforeTheBatchIsInTheViewTheBatchIsMatchedAgainst() throws Exception {
        watch = newWatch();
        watch.start();
        KeyValue registry = KvBuckets.ensure(front, KvBuckets.registry(BUCKET_BYTES));
        String project = UUID.randomUUID().toString();
        for (int i = 0; i < 50; i++) {
            SubscriptionEntry entry = RegistryEntries.binding(
                    project, "t" + i, RegistryEntries.claims("authenticated", project), "front-1");
            registry.put(entry.key(), JSON.writeValueAsBytes(entry)); // returns once the server acknowledged it

            watch.awaitCurrent();
            assertThat(watch.candidates(project, "t" + i))
                    .as("put %d, read right after the ack", i)
                    .extracting(SubscriptionEntry::subId)
                    .containsExactly(entry.subId());
        }
        var sync = meters.get("aura.cdc.registry.sync").timer();
        assertThat(sync.count()).isEqualTo(50);
        System.out.printf(
                "read-your-writes wait per batch: mean %.3f ms, max %.3f ms over %d batches%n",
                sync.mean(TimeUnit.MILLISECONDS), sync.max(TimeUnit.MILLISECONDS), sync.count());
    }

    @Test
    void forgedEntriesMatchNothingAndAreLoggedAndCountedOnce() throws Exception {
        watch = newWatch();
        watch.start();
        KeyValue registry = KvBuckets.ensure(front, KvBuckets.registry(BUCKET_BYTES));
        String victim = UUID.randomUUID().toString();
        String attacker = UUID.randomUUID().toString();
        SubscriptionEntry valid =
                RegistryEntries.binding(victim, "t", RegistryEntries.claims("anon", victim), "front-1");
        registry.put(valid.key(), JSON.writeValueAsBytes(valid));

        // the victim's project in the entry, the attacker's token in the claims
        put(registry, forged(victim, RegistryEntries.claims("service_role", attacker), "service_role", null));
        // the victim's project in the entry, filed under the attacker's key
        SubscriptionEntry underOtherKey =
                forged(victim, RegistryEntries.claims("service_role", victim), "service_role", null);
        registry.put(SubscriptionEntry.key(attacker, underOtherKey.subId()), JSON.writeValueAsBytes(underOtherKey));
        // a role the product does not know (a Postgres superuser, say)
        put(registry, forged(victim, RegistryEntries.claims("postgres", victim), "postgres", null));
        // a filter that does not parse
        put(registry, forged(victim, RegistryEntries.claims("anon", victim), "anon", "id=nope.%"));
        // claims of 80 KB: the bucket itself refuses values over SubscriptionEntry.MAX_BYTES
        ObjectNode huge = RegistryEntries.claims("anon", victim).put("padding", "x".repeat(80_000));
        assertThatThrownBy(() -> put(registry, forged(victim, huge, "anon", null)))
                .isInstanceOf(io.nats.client.JetStreamApiException.class);
        // not an entry at all
        registry.put(SubscriptionEntry.key(victim, UUID.randomUUID().toString()), "{\"sub_id\":".getBytes());

        watch.awaitCurrent();
        assertThat(watch.candidates(victim, "t")).containsExactly(valid);
        assertThat(invalidCount()).isEqualTo(5);

        watch.onConnectionEvent(ConnectionListener.Events.RECONNECTED); // a full re-watch replays the bucket
        Awaitility.await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            watch.awaitCurrent();
            assertThat(watch.candidates(victim, "t")).containsExactly(valid);
        });
        assertThat(invalidCount()).as("a replay is not counted again").isEqualTo(5);
    }

    /**
     * The periodic re-watch reloads the whole bucket; with thousands of bindings that took longer
     * than the sync timeout, and every batch read meanwhile was refused ("not loaded yet": the
     * reconnect storm of bench figure 9 saw CDC inactive for 44 s). The old view now stays current
     * until the new one loaded, so batches are matched throughout.
     */
    @Test
    void batchesAreMatchedWhileThePeriodicReWatchReloadsALargeBucket() throws Exception {
        KeyValue registry = KvBuckets.ensure(front, KvBuckets.registry(BUCKET_BYTES));
        String project = UUID.randomUUID().toString();
        ObjectNode claims = RegistryEntries.claims("authenticated", project);
        for (int i = 0; i < 10_000; i++) {
            SubscriptionEntry entry = RegistryEntries.binding(project, "bulk", claims, "front-1");
            registry.put(entry.key(), JSON.writeValueAsBytes(entry));
        }
        watch = newWatch(Duration.ofMillis(100), Duration.ofSeconds(1));
        watch.start();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        int batches = 0;
        while (System.nanoTime() < until) {
            SubscriptionEntry entry = RegistryEntries.binding(project, "t" + batches, claims, "front-1");
            registry.put(entry.key(), JSON.writeValueAsBytes(entry));
            watch.awaitCurrent(); // throws CdcFailure ("not loaded yet") while no view is current
            assertThat(watch.candidates(project, "t" + batches))
                    .extracting(SubscriptionEntry::subId)
                    .containsExactly(entry.subId());
            batches++;
        }
        assertThat(watch.candidates(project, "bulk")).hasSize(10_000);
        System.out.printf("%d batches matched during 3 s of re-watches every 100 ms%n", batches);
    }

    private static final long BUCKET_BYTES = 16L * 1024 * 1024;

    private RegistryWatch newWatch() throws Exception {
        return newWatch(Duration.ofMinutes(10), Duration.ofMillis(500));
    }

    private RegistryWatch newWatch(Duration resyncPeriod, Duration syncTimeout) throws Exception {
        return new RegistryWatch(
                worker,
                Clock.systemUTC(),
                new RegistryWatch.Settings(
                        resyncPeriod,
                        Duration.ofSeconds(10),
                        syncTimeout,
                        Duration.ofSeconds(10),
                        KvBuckets.registry(BUCKET_BYTES)),
                new CdcMetrics(meters));
    }

    private double invalidCount() {
        return meters.get("aura.cdc.registry.entries.invalid").counter().count();
    }

    private static SubscriptionEntry forged(String project, ObjectNode claims, String role, String filter) {
        return new SubscriptionEntry(
                UUID.randomUUID().toString(),
                project,
                "t",
                "*",
                filter,
                role,
                claims,
                System.currentTimeMillis() + 3_600_000,
                "front-1");
    }

    private static void put(KeyValue registry, SubscriptionEntry entry) throws Exception {
        registry.put(entry.key(), JSON.writeValueAsBytes(entry));
    }
}
