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
 * Issue 27 through a load balancer: realtime-js connects to a local TCP proxy that forwards to
 * replica 1; replica 1 is killed with {@code kill -9} while a row is inserted every 20 ms and the
 * proxy is pointed at replica 2 (which never had the client). The client reconnects to the same
 * proxy URL, rejoins by itself on replica 2, and receives every row exactly once, in commit order.
 */
class ResumeOnAnotherReplicaE2EIT {

    @Test
    void aClientRejoiningOnAnotherReplicaGetsEveryRowOnceInCommitOrder() throws Exception {
        try (ResumeStack s = ResumeStack.start(60, "(id int PRIMARY KEY)");
                SwitchableProxy proxy = new SwitchableProxy(s.stack.wsPort(0));
                RealtimeJsClient js = s.client(proxy.url(), UUID.randomUUID().toString(), Map.of());
                RowWriter writer = new RowWriter(
                        s.stack.pg,
                        id -> "INSERT INTO " + s.table() + "(id) VALUES (" + id + ")",
                        ResumeAfterReplicaKillE2EIT.EVERY_20_MS)) {
            assertThat(proxy.forwarded()).isEqualTo(1);
            writer.awaitMore(100);

            int mark = js.eventCount();
            long killedAt = System.nanoTime();
            s.stack.wsFront(0).kill9();
            proxy.switchTo(s.stack.wsPort(1));
            int atKill = writer.count();
            ResumeStack.awaitRejoin(js, mark, Duration.ofSeconds(30));
            long rejoinedMs = ResumeAfterReplicaKillE2EIT.ms(killedAt);
            int atRejoin = writer.count();
            assertThat(proxy.forwarded())
                    .as("the client reconnected through the proxy")
                    .isGreaterThanOrEqualTo(2);

            writer.awaitMore(100);
            List<Integer> committed = writer.stop();
            Deliveries.assertExactlyOnceInOrder(
                    js, CHANNEL, committed, Duration.ofSeconds(20), Duration.ofSeconds(1), s::logs);
            assertThat(Deliveries.resumeNotPossible(js, CHANNEL)).isEmpty();
            System.out.printf(
                    "replica 1 killed after row %d; the client rejoined on replica 2 %d ms later (%d rows committed"
                            + " meanwhile); %d rows in all%n",
                    atKill, rejoinedMs, atRejoin - atKill, committed.size());
        }
    }
}
