package dev.aura.realtime.e2e.resume;

import static dev.aura.realtime.e2e.resume.ResumeStack.CHANNEL;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.wire.ResumeRecord;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import io.nats.client.Connection;
import io.nats.client.KeyValue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 38 point 2, the {@code aura_resume} bucket: every byte a project makes there is charged to
 * that project; a project over its share, or a full bucket, is told {@code ResumeNotPossible} on
 * its own joins, never silence and never another project's failure; records expire at their
 * window plus a margin, not after 25 hours. realtime-js 2.119.1 throughout; the bucket is 64 KiB.
 */
class ResumeBucketE2EIT {
    private static final Map<String, String> SMALL_BUCKET = Map.of("RESUME_BUCKET_MAX_BYTES", "65536");

    /**
     * The bucket is full (other writers filled it). A user joins, its replica is killed while rows
     * are inserted, it rejoins: it must either get every row or be told to refetch.
     *
     * <p>Failed before the fix: the failed claim was taken for a second tab's, so the channel had
     * no record, nothing was said, and the rows committed while it was away were lost.
     */
    @Test
    void aFullBucketIsToldNotTakenForASecondTab() throws Exception {
        try (ResumeStack s = ResumeStack.start(60, "(id int PRIMARY KEY)", SMALL_BUCKET)) {
            int junk = fill(s);
            try (RealtimeJsClient js =
                            s.client(s.stack.wsUrl(0), UUID.randomUUID().toString(), Map.of());
                    RowWriter writer = new RowWriter(
                            s.stack.pg,
                            id -> "INSERT INTO " + s.table() + "(id) VALUES (" + id + ")",
                            ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
                writer.awaitMore(50);
                int mark = js.eventCount();
                s.stack.wsFront(0).kill9();
                s.stack.restartWsFront(0, SMALL_BUCKET);
                ResumeStack.awaitRejoin(js, mark, Duration.ofSeconds(30));
                writer.awaitMore(50);
                List<Integer> committed = writer.stop();
                Thread.sleep(1000);
                List<Integer> got = Deliveries.ids(js, CHANNEL);
                List<JsonNode> told = Deliveries.resumeNotPossible(js, CHANNEL);
                System.out.printf(
                        "full bucket (%d junk values): %s; told %s%n", junk, Deliveries.describe(committed, got), told);
                assertThat(told)
                        .as("rows lost (" + Deliveries.describe(committed, got) + ") must be told\n" + s.logs())
                        .isNotEmpty();
                assertThat(told)
                        .allSatisfy(t -> assertThat(t.path("reason").asText()).isEqualTo("resume_store_full"));
            }
        }
    }

    /**
     * Project A's share of the bucket is the default (1/40 of 64 KiB): a user of A subscribes to
     * 120 channels, far more records than that holds, and is told {@code resume_quota_exceeded} on
     * those past its share. Project B's user, on the same cluster, still resumes across a replica
     * kill: every row once, in order, nothing to refetch.
     *
     * <p>Failed before the fix: the bucket had no per-project share, A's channels filled it, and
     * neither A nor B was told anything.
     */
    @Test
    void aProjectOverItsShareIsToldAndAnotherProjectStillResumes() throws Exception {
        try (ResumeStack s = ResumeStack.start(60, "(id int PRIMARY KEY)", SMALL_BUCKET)) {
            String b = UUID.randomUUID().toString();
            s.stack.createProject(b);
            s.stack.createEnabledTable(b, "t", "(id int PRIMARY KEY)");
            s.stack.sql("INSERT INTO aura_platform.project_limits(project_id, max_resume_bytes,"
                    + " postgres_changes_resume_seconds) VALUES ('" + b + "', 16384, 60)");
            s.awaitHistoryStream(b);
            int told = 0;
            List<RealtimeJsClient> clientsOfA = new ArrayList<>();
            try {
                for (int c = 0; c < 2; c++) {
                    RealtimeJsClient js = RealtimeJsClient.start();
                    clientsOfA.add(js);
                    js.connect(
                            s.stack.wsUrl(1),
                            s.stack.tokens.anon(s.stack.projectId),
                            "2.0.0",
                            Map.of("accessToken", s.stack.tokens.authenticated(s.stack.projectId, "a" + c)));
                    for (int i = 0; i < 60; i++) {
                        String name = "c" + i;
                        js.channel(name, Map.of());
                        js.onPostgresChanges(name, Map.of("event", "INSERT", "schema", "public", "table", "t"));
                        js.onSystem(name);
                        js.subscribe(name);
                    }
                }
                Waits.until(
                        "A's 120 channels told Subscribed to PostgreSQL",
                        Duration.ofSeconds(60),
                        Duration.ofMillis(200),
                        () -> clientsOfA.stream()
                                        .mapToLong(ResumeBucketE2EIT::subscribedToPostgres)
                                        .sum()
                                >= 120,
                        () -> clientsOfA.stream()
                                        .map(ResumeBucketE2EIT::statuses)
                                        .toList() + "\n" + s.logs());
                Thread.sleep(1000);
                for (RealtimeJsClient js : clientsOfA) {
                    told += (int) js.events().stream()
                            .filter(e -> "resume_quota_exceeded"
                                    .equals(e.path("payload").path("reason").asText()))
                            .count();
                }
                try (Connection admin = s.nats.connect()) {
                    KeyValue kv = admin.keyValue(ResumeRecord.BUCKET);
                    System.out.printf(
                            "project A: 120 channels, %d told resume_quota_exceeded; the bucket holds %d keys%n",
                            told, kv.keys().size());
                }
                assertThat(told)
                        .as("A's channels past its share are told\n" + s.logs())
                        .isGreaterThanOrEqualTo(100);

                try (RealtimeJsClient js =
                                s.client(s.stack.wsUrl(0), b, UUID.randomUUID().toString(), Map.of());
                        RowWriter writer = new RowWriter(
                                s.stack.pg,
                                id -> "INSERT INTO " + s.stack.table(b, "t") + "(id) VALUES (" + id + ")",
                                ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
                    writer.awaitMore(50);
                    int mark = js.eventCount();
                    s.stack.wsFront(0).kill9();
                    s.stack.restartWsFront(0, SMALL_BUCKET);
                    ResumeStack.awaitRejoin(js, mark, Duration.ofSeconds(30));
                    writer.awaitMore(50);
                    List<Integer> committed = writer.stop();
                    Deliveries.assertExactlyOnceInOrder(
                            js, CHANNEL, committed, Duration.ofSeconds(20), Duration.ofSeconds(1), s::logs);
                    assertThat(Deliveries.resumeNotPossible(js, CHANNEL)).isEmpty();
                }
            } finally {
                clientsOfA.forEach(RealtimeJsClient::close);
            }
        }
    }

    /**
     * A window of 1 s: a user joins, receives a row and closes its socket (the record is parked).
     * The record and its pointer are deleted once the window and the margin (60 s) passed; the
     * bucket's own max age follows the registry's, not 25 hours.
     *
     * <p>Failed before the fix: both stayed 25 hours (the bucket's max age).
     */
    @Test
    void aParkedRecordExpiresAtItsWindowPlusAMargin() throws Exception {
        try (ResumeStack s = ResumeStack.start(1, "(id int PRIMARY KEY)");
                Connection admin = s.nats.connect()) {
            KeyValue kv = admin.keyValue(ResumeRecord.BUCKET);
            try (RealtimeJsClient js =
                    s.client(s.stack.wsUrl(0), UUID.randomUUID().toString(), Map.of())) {
                s.stack.sql("INSERT INTO " + s.table() + " VALUES (1)");
                js.awaitEvent(e -> "postgres_changes".equals(e.path("type").asText()), ResumeStack.T);
            }
            Waits.until(
                    "the parked record",
                    ResumeStack.T,
                    Duration.ofMillis(100),
                    () -> kv.keys().size() == 2,
                    s::logs);
            long parked = System.nanoTime();
            Waits.until(
                    "the record and its pointer deleted after the window and the margin",
                    Duration.ofSeconds(90),
                    Duration.ofMillis(500),
                    () -> kv.keys().isEmpty(),
                    s::logs);
            Duration ttl =
                    admin.keyValueManagement().getStatus(ResumeRecord.BUCKET).getTtl();
            System.out.printf(
                    "a record parked with a 1 s window was deleted %d s later; bucket max age %s%n",
                    (System.nanoTime() - parked) / 1_000_000_000L, ttl);
            assertThat(ttl).isLessThanOrEqualTo(Duration.ofMinutes(5));
        }
    }

    private static String statuses(RealtimeJsClient js) {
        return subscribedToPostgres(js) + " told Subscribed to PostgreSQL, statuses "
                + js.events().stream()
                        .filter(e -> "status".equals(e.path("type").asText()))
                        .map(e -> e.path("status").asText())
                        .toList();
    }

    private static long subscribedToPostgres(RealtimeJsClient js) {
        return js.events().stream()
                .filter(e -> "system".equals(e.path("type").asText())
                        && e.path("payload").path("message").asText().contains("Subscribed to PostgreSQL"))
                .count();
    }

    /**
     * Fills the bucket under other keys: 1 KiB values until it refuses one, then 1-byte values
     * until it refuses those too; how many values it took.
     */
    private static int fill(ResumeStack s) throws Exception {
        try (Connection admin = s.nats.connect()) {
            KeyValue kv = admin.keyValue(ResumeRecord.BUCKET);
            int n = 0;
            for (int size : new int[] {1024, 1}) {
                for (; n < 10_000; n++) {
                    try {
                        kv.put("junk-" + n, new byte[size]);
                    } catch (Exception full) {
                        n++;
                        break;
                    }
                }
            }
            return n;
        }
    }
}
