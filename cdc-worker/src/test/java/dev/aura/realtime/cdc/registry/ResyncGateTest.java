package dev.aura.realtime.cdc.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** After a NATS reconnect, matching waits for the replicas that owned bindings, at most the timeout. */
class ResyncGateTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final SubscriptionIndex view = new SubscriptionIndex(Duration.ofSeconds(120));
    private final ResyncGate gate = new ResyncGate(clock, Duration.ofSeconds(10));

    @Test
    void openWhileNatsNeverDisconnected() {
        put("a", "front-1");
        assertThat(gate.open(view)).isTrue();
        assertThat(gate.awaited(view)).isEmpty();
    }

    @Test
    void afterADisconnectClosedUntilEveryOwnerWroteAgain() {
        put("a", "front-1");
        put("b", "front-2");
        clock.advance(Duration.ofSeconds(1));
        gate.disconnected(view);
        clock.advance(Duration.ofSeconds(1));
        gate.reconnected();

        assertThat(gate.open(view)).isFalse();
        assertThat(gate.awaited(view)).containsExactlyInAnyOrder("front-1", "front-2");
        put("a", "front-1");
        assertThat(gate.open(view)).isFalse();
        assertThat(gate.awaited(view)).containsExactly("front-2");
        put("b", "front-2");
        assertThat(gate.open(view)).isTrue();
        assertThat(gate.open(view)).as("stays open").isTrue();
    }

    @Test
    void theTimeoutCountsFromTheReconnect_aReplicaThatNeverReturnsIsGivenUpThen() {
        put("a", "front-1");
        clock.advance(Duration.ofSeconds(1));
        gate.disconnected(view);
        clock.advance(Duration.ofMinutes(5)); // NATS down for long: no timeout before the reconnect
        assertThat(gate.open(view)).isFalse();

        gate.reconnected();
        clock.advance(Duration.ofSeconds(10));
        assertThat(gate.open(view)).isFalse();
        clock.advance(Duration.ofMillis(1));
        assertThat(gate.open(view)).isTrue();
    }

    @Test
    void ownersOfOnlyExpiredEntriesAreNotAwaited() {
        put("a", "front-1");
        clock.advance(Duration.ofSeconds(121));
        gate.disconnected(view);
        assertThat(gate.open(view)).isTrue();
    }

    @Test
    void aSecondDisconnectWhileWaitingKeepsTheFirstOnesStart() {
        put("a", "front-1");
        clock.advance(Duration.ofSeconds(1));
        gate.disconnected(view);
        clock.advance(Duration.ofSeconds(1));
        put("a", "front-1"); // written after the first disconnect: proves front-1 is back
        clock.advance(Duration.ofSeconds(1));
        gate.disconnected(view);
        gate.reconnected();
        assertThat(gate.open(view)).isTrue();
    }

    private void put(String subId, String owner) {
        SubscriptionEntry e = new SubscriptionEntry(subId, "p1", "t", "*", null, "anon", null, Long.MAX_VALUE, owner);
        view.put(e.key(), e, clock.millis());
    }
}
