package dev.aura.realtime.e2e.resume;

import static dev.aura.realtime.e2e.resume.ResumeStack.CHANNEL;
import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 27, as reported: realtime-js 2.119.2 subscribed to {@code t} through replica 1 while a
 * row is inserted every 20 ms; replica 1 is killed with {@code kill -9} and started again on the
 * same port; the client reconnects to the same URL and rejoins by itself. With resume on for the
 * project, it receives every row exactly once, in commit order: the rows committed while it was
 * away are replayed from the project's history, then live ones follow.
 */
class ResumeAfterReplicaKillE2EIT {
    static final Duration EVERY_20_MS = Duration.ofMillis(20);

    @Test
    void aClientRejoiningTheRestartedReplicaGetsEveryRowOnceInCommitOrder() throws Exception {
        try (ResumeStack s = ResumeStack.start(60, "(id int PRIMARY KEY)");
                RealtimeJsClient js =
                        s.client(s.stack.wsUrl(0), UUID.randomUUID().toString(), Map.of());
                RowWriter writer = new RowWriter(
                        s.stack.pg, id -> "INSERT INTO " + s.table() + "(id) VALUES (" + id + ")", EVERY_20_MS)) {
            writer.awaitMore(100); // 2 s of live rows first

            int mark = js.eventCount();
            long killedAt = System.nanoTime();
            s.stack.wsFront(0).kill9();
            int atKill = writer.count();
            s.stack.restartWsFront(0, Map.of());
            long restartedMs = ms(killedAt);
            ResumeStack.awaitRejoin(js, mark, Duration.ofSeconds(30));
            long rejoinedMs = ms(killedAt);
            int atRejoin = writer.count();

            writer.awaitMore(100); // 2 s of live rows after the rejoin
            List<Integer> committed = writer.stop();
            Deliveries.assertExactlyOnceInOrder(
                    js, CHANNEL, committed, Duration.ofSeconds(20), Duration.ofSeconds(1), s::logs);
            assertThat(Deliveries.resumeNotPossible(js, CHANNEL))
                    .as("no refetch message within the window")
                    .isEmpty();
            assertThat(s.streams()).as("the project's history stream").contains(s.historyStream());
            assertThat(Deliveries.inserts(js, CHANNEL))
                    .as("records as the table has them: no _aura_event_id unless asked for")
                    .noneMatch(r -> r.has("_aura_event_id"));
            System.out.printf(
                    "replica 1 killed after row %d, back after %d ms; the client rejoined %d ms after the kill"
                            + " (%d rows committed meanwhile); %d rows in all%n",
                    atKill, restartedMs, rejoinedMs, atRejoin - atKill, committed.size());
        }
    }

    static long ms(long since) {
        return (System.nanoTime() - since) / 1_000_000;
    }
}
