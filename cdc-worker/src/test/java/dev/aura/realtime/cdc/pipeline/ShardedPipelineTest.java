package dev.aura.realtime.cdc.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.cdc.event.ChangeSink;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.HeldChange;
import dev.aura.realtime.cdc.event.Quarantined;
import dev.aura.realtime.cdc.event.RawRow;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.RowFault;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.health.RowFaultLedger;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.publish.ChangePublisher;
import dev.aura.realtime.cdc.registry.SubscriptionRegistry;
import dev.aura.realtime.cdc.rls.AccessPolicy;
import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.common.wire.WireJson;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The RLS shards in memory: hand-written registry, policy and publisher, no Postgres or NATS. */
class ShardedPipelineTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final long INT4 = 23;

    private final FakeRegistry registry = new FakeRegistry();
    private final FakePublisher publisher = new FakePublisher();
    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final CdcMetrics metrics = new CdcMetrics(meters);
    private AccessPolicy policy = ShardedPipelineTest::allowEveryMatch;
    private final List<Kept> quarantined = new CopyOnWriteArrayList<>();
    private final RowFaultLedger ledger = new RowFaultLedger(java.time.Clock.systemUTC());

    /** A change kept in its project's quarantine. */
    private record Kept(HeldChange change, Quarantined why) {}

    private ShardedPipeline pipeline;

    @AfterEach
    void tearDown() {
        if (pipeline != null) {
            pipeline.close();
        }
    }

    @Test
    void everyAcceptedChangeIsPublishedBeforeFlushReturns_eachProjectInCommitOrder() throws Exception {
        List<String> projects = List.of("p1", "p2", "p3", "p4", "p5");
        projects.forEach(p -> registry.bind(p, "t", "sub-" + p));
        start(4, 8);
        for (int i = 0; i < 200; i++) {
            String project = projects.get(i % projects.size());
            pipeline.accept(change(project, i), project);
        }
        pipeline.flush();

        assertThat(publisher.events).hasSize(200);
        assertThat(publisher.flushedAfter)
                .as("the NATS flush comes after every publish")
                .isEqualTo(200);
        for (String project : projects) {
            List<Integer> ids = publisher.events.stream()
                    .filter(e -> e.subject().contains("." + project + "."))
                    .map(e -> e.body().path("data").path("record").path("id").asInt())
                    .toList();
            assertThat(ids).hasSize(40).isSorted();
        }
        assertThat(publisher.events)
                .filteredOn(e -> e.subject().contains(".p1."))
                .allSatisfy(e ->
                        assertThat(e.body().path("allowed_sub_ids").toString()).isEqualTo("[\"sub-p1\"]"));
        assertThat(counter("aura.cdc.events.published")).isEqualTo(200);
    }

    @Test
    void messagesTableRowsArePublishedAsDatabaseBroadcastsInCommitOrderWithTheProjectsChanges() throws Exception {
        registry.bind("p1", "t", "sub-p1");
        start(2, 8);
        pipeline.accept(change("p1", 1), "p1");
        pipeline.accept(message("p1", 2, "first"), "p1");
        pipeline.accept(change("p1", 3), "p1");
        pipeline.accept(message("p1", 4, "second"), "p1");
        pipeline.flush();

        assertThat(publisher.events)
                .extracting(e -> e.subject().startsWith("aura.realtime.messages.")
                        ? e.body().path("event").asText()
                        : "change "
                                + e.body()
                                        .path("data")
                                        .path("record")
                                        .path("id")
                                        .asInt())
                .containsExactly("change 1", "first", "change 3", "second");
        Published first = publisher.events.get(1);
        assertThat(first.subject()).isEqualTo("aura.realtime.messages.p1.room");
        assertThat(first.eventId()).isEqualTo("0/1002:0");
        assertThat(first.body().path("id").asText()).isEqualTo("id-2");
        assertThat(counter("aura.cdc.events.published")).isEqualTo(4);
    }

    @Test
    void aChangeNobodyMaySeeIsCountedAndNotPublished() throws Exception {
        registry.bind("p1", "other_table", "sub-1");
        start(2, 8);
        pipeline.accept(change("p1", 1), "p1");
        pipeline.flush();

        assertThat(publisher.events).isEmpty();
        assertThat(counter("aura.cdc.events.unmatched")).isEqualTo(1);
    }

    @Test
    void onlyTheSubscribersThePolicyAllowsAreListed() throws Exception {
        registry.bind("p1", "t", "allowed");
        registry.bind("p1", "*", "denied");
        policy = batch -> batch.stream()
                .map(c -> c.matched().stream()
                        .map(SubscriptionEntry::subId)
                        .filter("allowed"::equals)
                        .toList())
                .map(ShardedPipelineTest::fullView)
                .map(AccessPolicy.Decision::deliver)
                .toList();
        start(1, 8);
        pipeline.accept(change("p1", 1), "p1");
        pipeline.flush();

        assertThat(publisher.events)
                .singleElement()
                .satisfies(e ->
                        assertThat(e.body().path("allowed_sub_ids").toString()).isEqualTo("[\"allowed\"]"));
    }

    @Test
    void aPublishNatsRefusedFailsTheNextFlush_andTheFlushAfterThatStartsClean() throws Exception {
        registry.bind("p1", "t", "sub-1");
        publisher.failPublishAt = 2;
        start(1, 8);
        for (int i = 1; i <= 5; i++) {
            pipeline.accept(change("p1", i), "p1");
        }
        assertThatThrownBy(pipeline::flush)
                .isInstanceOfSatisfying(
                        CdcFailure.class, f -> assertThat(f.reason()).isEqualTo(CdcReason.NATS_UNAVAILABLE));
        assertThat(publisher.events)
                .as("the rest of the batch is skipped: it is re-read")
                .hasSize(1);
        assertThat(counter("aura.cdc.publish.failures")).isEqualTo(1);

        publisher.failPublishAt = 0;
        pipeline.newReading(); // the reader reads again (SlotReader)
        pipeline.accept(change("p1", 1), "p1");
        pipeline.flush();
        assertThat(publisher.events).hasSize(2);
    }

    @Test
    void aFlushNatsDidNotConfirmFailsTheBatch() throws Exception {
        registry.bind("p1", "t", "sub-1");
        publisher.failFlush = true;
        start(2, 8);
        pipeline.accept(change("p1", 1), "p1");

        assertThatThrownBy(pipeline::flush)
                .isInstanceOfSatisfying(
                        CdcFailure.class, f -> assertThat(f.reason()).isEqualTo(CdcReason.NATS_UNAVAILABLE));
        assertThat(counter("aura.cdc.publish.failures")).isEqualTo(1);
    }

    @Test
    void whileTheRegistryReSynchronisesTheBatchFailsAndNothingIsPublished() throws Exception {
        registry.bind("p1", "t", "sub-1");
        registry.awaited = Set.of("front-2");
        start(1, 8);
        pipeline.accept(change("p1", 1), "p1");

        assertThatThrownBy(pipeline::flush).isInstanceOfSatisfying(CdcFailure.class, f -> {
            assertThat(f.reason()).isEqualTo(CdcReason.NATS_UNAVAILABLE);
            assertThat(f.getMessage()).contains("front-2");
        });
        assertThat(publisher.events).isEmpty();
    }

    @Test
    void eachHandOffAsksTheRegistryForOnePosition_andABatchFailsWhenItsViewCannotCatchUp() throws Exception {
        registry.bind("p1", "t", "sub-1");
        start(2, 8);
        pipeline.accept(change("p1", 1), "p1");
        pipeline.accept(change("p1", 2), "p1");
        pipeline.flush();
        assertThat(registry.positions)
                .as("one position for the changes handed off together")
                .hasValue(1);
        assertThat(publisher.events).hasSize(2);

        registry.behind = CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "registry view behind", null);
        pipeline.accept(change("p1", 3), "p1");
        pipeline.accept(change("p1", 4), "p1");
        assertThatThrownBy(pipeline::flush)
                .as("a batch matched against a view missing acknowledged bindings would advance past their changes")
                .isInstanceOfSatisfying(
                        CdcFailure.class, f -> assertThat(f.getMessage()).contains("behind"));
        assertThat(publisher.events).as("nothing of the failed batch").hasSize(2);

        registry.behind = null;
        pipeline.newReading(); // the reader reads again (SlotReader)
        pipeline.flush();
        assertThat(registry.positions).as("nothing handed off, nothing asked").hasValue(2);
        pipeline.accept(change("p1", 3), "p1");
        pipeline.flush();
        assertThat(publisher.events).hasSize(3);
    }

    @Test
    void afterAFailedBatchTheReadingsLaterBatchesWaitForTheReadingAgain_soNoChangeOvertakesTheFailedOne()
            throws Exception {
        registry.bind("p1", "t", "sub-1");
        start(1, 64);
        registry.behindOnce = CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "registry view behind", null);
        // the streaming reader marks and reads on while earlier marks are processed
        pipeline.accept(change("p1", 1), "p1");
        ChangeSink.Barrier first = pipeline.mark();
        pipeline.accept(change("p1", 2), "p1");
        ChangeSink.Barrier second = pipeline.mark();
        pipeline.accept(change("p1", 3), "p1"); // accepted, not handed off when the reading ends
        assertThatThrownBy(first::await).isInstanceOf(CdcFailure.class);
        assertThatThrownBy(second::await)
                .as("the reading that failed confirms nothing more")
                .isInstanceOf(CdcFailure.class);
        assertThat(publisher.events)
                .as("change 2 published before change 1 is read again would reach its clients first")
                .isEmpty();

        pipeline.newReading(); // the reader starts again from the slot's confirmed position
        for (int i = 1; i <= 3; i++) {
            pipeline.accept(change("p1", i), "p1");
        }
        pipeline.flush();
        assertThat(publisher.events)
                .extracting(e -> e.body().path("data").path("record").path("id").asInt())
                .containsExactly(1, 2, 3);
    }

    @Test
    void anRlsCheckWithoutPostgresFailsTheBatchInsteadOfDroppingIt() throws Exception {
        registry.bind("p1", "t", "sub-1");
        policy = batch -> {
            throw CdcFailure.retriable(CdcReason.POSTGRES_UNAVAILABLE, "connection refused", null);
        };
        start(1, 8);
        pipeline.accept(change("p1", 1), "p1");

        assertThatThrownBy(pipeline::flush)
                .isInstanceOfSatisfying(
                        CdcFailure.class, f -> assertThat(f.reason()).isEqualTo(CdcReason.POSTGRES_UNAVAILABLE));
        assertThat(publisher.events).isEmpty();
    }

    @Test
    void aBugInOneChangesCheckIsThatChangesFault_theRunGoesOnAndTheChangeIsQuarantined() throws Exception {
        registry.bind("p1", "t", "sub-1");
        registry.bind("p2", "t", "sub-2");
        policy = batch -> {
            if (batch.stream().anyMatch(c -> c.event().projectId().equals("p1"))) {
                throw new IllegalStateException("a bug, quoting the tenant's 'secret'");
            }
            return allowEveryMatch(batch);
        };
        start(1, 8);
        pipeline.accept(change("p1", 1), "p1");
        pipeline.accept(change("p2", 2), "p2");
        pipeline.flush(); // the batch completes: the slot may advance past the poison

        assertThat(quarantined).singleElement().satisfies(q -> {
            assertThat(q.change().projectId()).isEqualTo("p1");
            assertThat(q.why().fault()).isEqualTo(RowFault.INTERNAL);
            assertThat(q.why().stage()).isEqualTo("check");
            assertThat(q.why().detail()).doesNotContain("secret");
        });
        assertThat(publisher.events).hasSize(2);
        JsonNode error = publisher.events.get(0).body();
        assertThat(error.path("allowed_sub_ids").toString()).isEqualTo("[\"sub-1\"]");
        assertThat(error.path("data").path("errors").toString()).isEqualTo("[\"Error 500: Internal Server Error\"]");
        assertThat(error.path("data").path("record").size()).isZero();
        assertThat(publisher
                        .events
                        .get(1)
                        .body()
                        .path("data")
                        .path("record")
                        .path("id")
                        .asInt())
                .isEqualTo(2);
        assertThat(ledger.snapshot().projects()).containsOnlyKeys("p1");
    }

    @Test
    void aChangeThatCannotBeBuiltIsItsProjectsFault_toldToTheTablesBindingsWithoutValues() throws Exception {
        registry.bind("p1", "t", "sub-1");
        start(1, 8);
        RowChange poison = new RowChange(
                'I',
                "project_p1",
                "t",
                List.of(),
                List.of(),
                List.of(),
                Lsn.parse("0/2000"),
                0,
                "2026-01-02T03:04:05Z",
                RawRow.of("{\"action\":\"I\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                false,
                "a value of the row could not be decoded (StreamConstraintsException)");
        pipeline.accept(poison, "p1");
        pipeline.accept(change("p1", 3), "p1");
        pipeline.flush();

        assertThat(quarantined).singleElement().satisfies(q -> {
            assertThat(q.why().fault()).isEqualTo(RowFault.UNPROCESSABLE);
            assertThat(q.why().stage()).isEqualTo("decode");
            assertThat(q.change().raw().text()).isEqualTo("{\"action\":\"I\"}");
        });
        assertThat(publisher.events)
                .extracting(e -> e.body().path("data").path("errors").toString())
                .containsExactly("[\"Error 422: Unprocessable Entity\"]", "null");
    }

    @Test
    void aTopicTooLongForANatsSubjectIsQuarantined_andTheRunGoesOn() throws Exception {
        registry.bind("p1", "t", "sub-1");
        start(1, 8);
        pipeline.accept(message("p1", 1, "e", "t".repeat(4_000)), "p1");
        pipeline.accept(change("p1", 2), "p1");
        pipeline.flush();
        assertThat(quarantined).singleElement().satisfies(q -> {
            assertThat(q.why().fault()).isEqualTo(RowFault.TOO_LARGE);
            assertThat(q.why().detail()).contains("topic");
        });
        assertThat(publisher.events).singleElement();
    }

    @Test
    void eachEventCarriesTheTermsLeaseEpoch_andAFencedTermPublishesNothing() throws Exception {
        registry.bind("p1", "t", "sub-1");
        start(1, 8);
        pipeline.useGate(gate(7, null));
        pipeline.accept(change("p1", 1), "p1");
        pipeline.flush();
        assertThat(publisher.events)
                .singleElement()
                .satisfies(e -> assertThat(e.leaseEpoch()).isEqualTo(7));

        pipeline.useGate(gate(7, "lease lost"));
        pipeline.accept(change("p1", 2), "p1");
        assertThatThrownBy(pipeline::flush)
                .isInstanceOfSatisfying(
                        CdcFailure.class, f -> assertThat(f.reason()).isEqualTo(CdcReason.NOT_LEADER));
        assertThat(publisher.events).hasSize(1);
    }

    @Test
    void acceptBlocksWhileTheShardsQueueIsFull() throws Exception {
        registry.bind("p1", "t", "sub-1");
        publisher.hold = new CountDownLatch(1);
        start(1, 2);
        Thread poller = Thread.ofPlatform().start(() -> {
            try {
                for (int i = 0; i < 10; i++) {
                    pipeline.accept(change("p1", i), "p1");
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> poller.getState() == Thread.State.WAITING);
        assertThat(poller.isAlive()).isTrue();

        publisher.hold.countDown();
        poller.join(5000);
        assertThat(poller.isAlive()).isFalse();
        pipeline.flush();
        assertThat(publisher.events).hasSize(10);
    }

    /** @param queueChanges the shard queue's byte bound, in multiples of one small test change */
    private void start(int shards, int queueChanges) {
        pipeline = new ShardedPipeline(
                new ShardedPipeline.Settings(
                        shards, queueChanges * change("p", 0).heapCost(), 1 << 20, Duration.ofSeconds(5)),
                new EventBuilder(oid -> "int4", 1024),
                registry,
                policy,
                publisher,
                metrics,
                new ShardedPipeline.Containment(
                        (change, why) -> quarantined.add(new Kept(change, why)), ledger, null, null));
        pipeline.start();
    }

    @Test
    void queuesAreBoundedInBytes_aChangeLargerThanTheQueueIsTakenAloneAndItsOversizedRecordIsCut() throws Exception {
        registry.bind("p1", "t", "sub-1");
        publisher.hold = new CountDownLatch(1);
        start(1, 4);
        RowChange big = bigChange("p1", 1, 3 * change("p1", 0).heapCost());
        Thread reader = Thread.ofPlatform().start(() -> {
            try {
                pipeline.accept(change("p1", 0), "p1");
                pipeline.accept(big, "p1"); // waits until the queue is empty, then is taken alone
                pipeline.accept(change("p1", 2), "p1");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        await().atMost(Duration.ofSeconds(5)).until(() -> reader.getState() == Thread.State.WAITING);
        publisher.hold.countDown();
        reader.join(5000);
        pipeline.flush();
        assertThat(publisher.events)
                .extracting(e -> e.body().path("data").path("record").path("id").asInt())
                .containsExactly(0, 1, 2);
        JsonNode cut = publisher.events.get(1).body().path("data");
        assertThat(cut.path("errors").toString()).isEqualTo("[\"" + EventBuilder.PAYLOAD_TOO_LARGE + "\"]");
        assertThat(cut.path("record").has("body")).isFalse();
        assertThat(counter("aura.cdc.events.too.large")).isEqualTo(1.0);
    }

    @Test
    void aMessageLargerThanNatsAcceptsIsPublishedWithItsRowsCutInsteadOfFailingForEver() throws Exception {
        registry.bind("p1", "t", "sub-1");
        publisher.maxPayload = 600;
        start(1, 8);
        // under CDC_MAX_RECORD_BYTES (1024 here), but the message would exceed NATS's max_payload
        pipeline.accept(bigChange("p1", 1, 700), "p1");
        pipeline.flush();
        JsonNode data = publisher.events.get(0).body().path("data");
        assertThat(data.path("errors").toString()).isEqualTo("[\"" + EventBuilder.PAYLOAD_TOO_LARGE + "\"]");
        assertThat(data.path("record").path("id").asInt()).isEqualTo(1);
        assertThat(data.path("record").has("body")).isFalse();
    }

    /** A change with a text column of {@code bytes} characters (column "body", type unknown to the fake catalog). */
    private static RowChange bigChange(String project, int id, long bytes) {
        return new RowChange(
                'I',
                "project_" + project,
                "t",
                List.of(
                        EventFixture.column("id", INT4, JSON.numberNode(id)),
                        EventFixture.column("body", 25, JSON.textNode("x".repeat((int) bytes)))),
                List.of(),
                List.of("id"),
                Lsn.parse("0/" + Integer.toHexString(0x1000 + id).toUpperCase()),
                0,
                "2026-01-02T03:04:05Z",
                new RawRow(new byte[(int) bytes], 0, (int) bytes),
                false);
    }

    private double counter(String name) {
        return meters.get(name).counter().count();
    }

    private static List<AccessPolicy.Decision> allowEveryMatch(List<AccessPolicy.Candidates> batch) {
        return batch.stream()
                .map(c -> c.matched().stream().map(SubscriptionEntry::subId).toList())
                .map(ShardedPipelineTest::fullView)
                .map(AccessPolicy.Decision::deliver)
                .toList();
    }

    private static List<Delivery> fullView(List<String> subIds) {
        return subIds.isEmpty() ? List.of() : List.of(new Delivery(View.FULL, subIds));
    }

    private static RowChange change(String project, int id) {
        return EventFixture.change(
                'I',
                "project_" + project,
                "t",
                List.of(EventFixture.column("id", INT4, JSON.numberNode(id))),
                List.of(),
                List.of("id"),
                Lsn.parse("0/" + Integer.toHexString(0x1000 + id).toUpperCase()),
                0,
                "2026-01-02T03:04:05Z");
    }

    /** An INSERT into the project's messages table: a broadcast on topic {@code room}. */
    private static RowChange message(String project, int n, String event) {
        return message(project, n, event, "room");
    }

    private static RowChange message(String project, int n, String event, String topic) {
        return EventFixture.change(
                'I',
                "project_" + project + "_realtime",
                "messages",
                List.of(
                        EventFixture.column("topic", 25, JSON.textNode(topic)),
                        EventFixture.column("extension", 25, JSON.textNode("broadcast")),
                        EventFixture.column("event", 25, JSON.textNode(event)),
                        EventFixture.column("payload", 3802, JSON.textNode("{\"n\": " + n + "}")),
                        EventFixture.column("private", 16, JSON.booleanNode(true)),
                        EventFixture.column("id", 2950, JSON.textNode("id-" + n))),
                List.of(),
                List.of("id"),
                Lsn.parse("0/" + Integer.toHexString(0x1000 + n).toUpperCase()),
                0,
                "2026-01-02T03:04:05Z");
    }

    private static LeaderGate gate(long epoch, String fencedBecause) {
        return new LeaderGate() {
            @Override
            public void checkFence() throws FencedException {
                if (fencedBecause != null) {
                    throw new FencedException(fencedBecause);
                }
            }

            @Override
            public long leaseEpoch() {
                return epoch;
            }
        };
    }

    /**
     * A registry with fixed bindings; {@link #awaited} non-empty means re-synchronising, a
     * non-null {@link #behind} means its view cannot catch up with the bucket.
     */
    private static final class FakeRegistry implements SubscriptionRegistry {
        final List<SubscriptionEntry> entries = new CopyOnWriteArrayList<>();
        volatile Set<String> awaited = Set.of();
        volatile CdcFailure behind;
        /** Fails the next batch only. */
        volatile CdcFailure behindOnce;

        final java.util.concurrent.atomic.AtomicInteger positions = new java.util.concurrent.atomic.AtomicInteger();

        void bind(String project, String table, String subId) {
            entries.add(new SubscriptionEntry(
                    subId, project, table, "*", null, "service_role", null, Long.MAX_VALUE, "front-1"));
        }

        @Override
        public List<SubscriptionEntry> candidates(String projectId, String table) {
            return entries.stream()
                    .filter(e -> e.projectId().equals(projectId)
                            && (e.table().equals(table) || e.table().equals("*")))
                    .collect(Collectors.toList());
        }

        @Override
        public boolean synchronised() {
            return awaited.isEmpty();
        }

        @Override
        public Set<String> awaitedReplicas() {
            return awaited;
        }

        @Override
        public java.util.concurrent.CompletableFuture<Long> position() {
            positions.incrementAndGet();
            return java.util.concurrent.CompletableFuture.completedFuture(0L);
        }

        @Override
        public void awaitApplied(java.util.concurrent.CompletableFuture<Long> position) throws CdcFailure {
            if (behind != null) {
                throw behind;
            }
            CdcFailure once = behindOnce;
            if (once != null) {
                behindOnce = null;
                throw once;
            }
        }
    }

    record Published(String subject, String eventId, long leaseEpoch, JsonNode body) {}

    /** Records publishes; can refuse the n-th publish, every flush, or hold publishes until released. */
    private static final class FakePublisher implements ChangePublisher {
        final List<Published> events = Collections.synchronizedList(new ArrayList<>());
        volatile int failPublishAt;
        volatile boolean failFlush;
        volatile CountDownLatch hold;
        volatile int flushedAfter = -1;
        volatile long maxPayload = Long.MAX_VALUE;
        private int attempts;

        @Override
        public synchronized void publish(String subject, String eventId, long leaseEpoch, byte[] body)
                throws CdcFailure {
            CountDownLatch h = hold;
            if (h != null) {
                try {
                    h.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            if (++attempts == failPublishAt) {
                throw CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "NATS connection closed", null);
            }
            try {
                events.add(new Published(
                        subject, eventId, leaseEpoch, WireJson.mapper().readTree(body)));
            } catch (java.io.IOException e) {
                throw new IllegalStateException(e);
            }
        }

        @Override
        public synchronized void flush(Duration timeout) throws CdcFailure {
            if (failFlush) {
                throw CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "NATS did not confirm the batch", null);
            }
            flushedAfter = events.size();
        }

        @Override
        public long maxPayload() {
            return maxPayload;
        }
    }
}
