package dev.aura.realtime.e2e.resume;

import static dev.aura.realtime.e2e.resume.ResumeStack.CHANNEL;
import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A project whose {@code postgres_changes_resume_seconds} is 0 has resume off (0 turns it off
 * whatever the operator's default). The issue 27 scenario (replica 1 killed and restarted while a row is
 * inserted every 20 ms) behaves as before resume existed: the client rejoins and receives the rows
 * committed after its rejoin; no {@code system} message about resume, no {@code _aura_event_id} in
 * records, and no history stream exists on NATS.
 */
class ResumeOffE2EIT {

    @Test
    void withoutResumeNothingChanges() throws Exception {
        try (ResumeStack s = ResumeStack.start(0, "(id int PRIMARY KEY)");
                RealtimeJsClient js =
                        s.client(s.stack.wsUrl(0), UUID.randomUUID().toString(), Map.of());
                RowWriter writer = new RowWriter(
                        s.stack.pg,
                        id -> "INSERT INTO " + s.table() + "(id) VALUES (" + id + ")",
                        ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
            writer.awaitMore(50);
            int mark = js.eventCount();
            s.stack.wsFront(0).kill9();
            s.stack.restartWsFront(0, Map.of());
            ResumeStack.awaitRejoin(js, mark, Duration.ofSeconds(30));
            int atRejoin = writer.count();
            writer.awaitMore(100);
            List<Integer> committed = writer.stop();

            List<Integer> afterRejoin =
                    committed.stream().filter(id -> id > atRejoin + 25).toList();
            Deliveries.assertExactlyOnceInOrder(
                    js,
                    CHANNEL,
                    afterRejoin,
                    id -> id > atRejoin + 25,
                    Duration.ofSeconds(20),
                    Duration.ofSeconds(1),
                    s::logs);
            assertThat(js.events())
                    .as("no system message about resume")
                    .noneMatch(e -> "system".equals(e.path("type").asText())
                            && e.path("payload").has("code"));
            assertThat(Deliveries.inserts(js, CHANNEL)).as("records unchanged").noneMatch(r -> r.has("_aura_event_id"));
            // the shared Postgres holds other tests' projects (some with resume on), and this stack's
            // worker serves them all: only this project's stream must be absent
            assertThat(s.streams())
                    .as("no history stream for a project without resume")
                    .doesNotContain(s.historyStream());
            TreeSet<Integer> lost = new TreeSet<>(committed);
            lost.removeAll(Deliveries.ids(js, CHANNEL));
            System.out.printf(
                    "resume off: %d of %d rows never reached the client (%s), as before issue 27%n",
                    lost.size(), committed.size(), Deliveries.ranges(lost));
        }
    }
}
