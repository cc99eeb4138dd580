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
 * Two tabs of one user, same topic and bindings, behind a load balancer that put them on different
 * ws-front replicas (so they share one resume record's key). The first tab unsubscribes (an explicit
 * {@code phx_leave}, which deletes its registry entries) while a row is inserted every 20 ms: the
 * second tab, still subscribed, must go on receiving every row, once each, in commit order.
 */
class ResumeTwoTabsE2EIT {

    @Test
    void aTabLeavingOnOneReplicaCostsTheSameUsersTabOnAnotherReplicaNothing() throws Exception {
        String user = UUID.randomUUID().toString();
        try (ResumeStack s = ResumeStack.start(60, "(id int PRIMARY KEY)");
                RealtimeJsClient tab1 = s.client(s.stack.wsUrl(0), user, Map.of())) {
            // tab 1 receives some rows, then the channel is quiet (its record's last write done)
            try (RowWriter before = new RowWriter(
                    s.stack.pg,
                    id -> "INSERT INTO " + s.table() + "(id) VALUES (" + id + ")",
                    ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
                before.awaitMore(30);
                before.stop();
            }
            Thread.sleep(1000);
            try (RealtimeJsClient tab2 = s.client(s.stack.wsUrl(1), user, Map.of());
                    RowWriter writer = new RowWriter(
                            s.stack.pg,
                            id -> "INSERT INTO " + s.table() + "(id) VALUES (" + (AFTER + id) + ")",
                            ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
                writer.awaitMore(50);
                tab1.unsubscribe(CHANNEL);
                int atLeave = writer.count();
                writer.awaitMore(150); // 3 s: shorter than a replica's 30 s registry refresh
                List<Integer> owed =
                        writer.stop().stream().map(id -> AFTER + id).toList();
                Deliveries.assertExactlyOnceInOrder(
                        tab2, CHANNEL, owed, id -> id > AFTER, Duration.ofSeconds(20), Duration.ofSeconds(1), s::logs);
                assertThat(Deliveries.resumeNotPossible(tab2, CHANNEL)).isEmpty();
                System.out.printf(
                        "tab 1 left after %d of tab 2's rows; tab 2 received all %d rows%n", atLeave, owed.size());
            }
        }
    }

    private static final int AFTER = 1_000_000;
}
