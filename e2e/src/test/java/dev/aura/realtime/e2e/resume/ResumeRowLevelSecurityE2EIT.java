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
 * Issue 27 under RLS: {@code t} has a policy {@code owner = auth.uid()}; rows are inserted every
 * 20 ms for alice (ids 1, 4, 7, ...) and bob (the others). alice and bob each listen through
 * replica 1, which is killed and restarted. Each gets exactly their own rows, once, in commit
 * order: the replay after the rejoin carries no row the policy hides from them.
 */
class ResumeRowLevelSecurityE2EIT {

    @Test
    void theReplayHoldsExactlyTheRowsThePolicyShowsEachUser() throws Exception {
        String alice = UUID.randomUUID().toString();
        String bob = UUID.randomUUID().toString();
        try (ResumeStack s = ResumeStack.start(
                        60,
                        "(id int PRIMARY KEY, owner uuid NOT NULL)",
                        "ALTER TABLE {t} ENABLE ROW LEVEL SECURITY",
                        "CREATE POLICY own_rows ON {t} FOR SELECT USING (owner = auth.uid())");
                RealtimeJsClient aliceJs = client(s, alice);
                RealtimeJsClient bobJs = s.client(s.stack.wsUrl(0), bob, Map.of());
                RowWriter writer = new RowWriter(
                        s.stack.pg,
                        id -> "INSERT INTO " + s.table() + "(id, owner) VALUES (" + id + ", '" + owner(id, alice, bob)
                                + "')",
                        ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
            writer.awaitMore(100);
            int aliceMark = aliceJs.eventCount();
            int bobMark = bobJs.eventCount();
            s.stack.wsFront(0).kill9();
            s.stack.restartWsFront(0, Map.of());
            ResumeStack.awaitRejoin(aliceJs, aliceMark, Duration.ofSeconds(30));
            ResumeStack.awaitRejoin(bobJs, bobMark, Duration.ofSeconds(30));
            writer.awaitMore(100);
            List<Integer> committed = writer.stop();

            List<Integer> alicesRows = committed.stream()
                    .filter(id -> owner(id, alice, bob).equals(alice))
                    .toList();
            List<Integer> bobsRows = committed.stream()
                    .filter(id -> owner(id, alice, bob).equals(bob))
                    .toList();
            Deliveries.assertExactlyOnceInOrder(
                    aliceJs, CHANNEL, alicesRows, Duration.ofSeconds(20), Duration.ofSeconds(1), s::logs);
            Deliveries.assertExactlyOnceInOrder(
                    bobJs, CHANNEL, bobsRows, Duration.ofSeconds(5), Duration.ZERO, s::logs);
            assertThat(Deliveries.inserts(aliceJs, CHANNEL))
                    .as("alice never receives a row of bob's")
                    .allMatch(r -> alice.equals(r.path("owner").asText()));
            assertThat(Deliveries.inserts(bobJs, CHANNEL))
                    .as("bob never receives a row of alice's")
                    .allMatch(r -> bob.equals(r.path("owner").asText()));
        }
    }

    private static RealtimeJsClient client(ResumeStack s, String sub) {
        return s.client(s.stack.wsUrl(0), sub, Map.of());
    }

    private static String owner(int id, String alice, String bob) {
        return id % 3 == 1 ? alice : bob;
    }
}
