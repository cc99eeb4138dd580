package dev.aura.realtime.front.history;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.front.protocol.UserBroadcast;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class HistoryStoreTest {
    private static final long NOW = 1_800_000_000_000L;

    private static UserBroadcast msg(long atMs, String body) {
        return new UserBroadcast("e", body.getBytes(StandardCharsets.UTF_8), true, MessageIds.next(atMs));
    }

    @Test
    void idsCarryTheSenderTimestamp() {
        String id = MessageIds.next(NOW);
        assertThat(MessageIds.timestampOf(id, 0)).isEqualTo(NOW);
        assertThat(java.util.UUID.fromString(id).version()).isEqualTo(7);
        assertThat(MessageIds.timestampOf("not-a-uuid", 42)).isEqualTo(42);
    }

    @Test
    void sinceFiltersBySenderTimeAndKeepsTheNewestUpToLimit() {
        HistoryStore h = new HistoryStore(3, 10, 1 << 20, 60_000, 10, 1 << 20);
        for (int i = 0; i < 5; i++) {
            h.add("p", "c", msg(NOW + i, "\"" + i + "\""), NOW + i);
        }
        assertThat(h.since("p", "c", 0, 10, NOW + 5))
                .extracting(e -> new String(e.message().payload(), StandardCharsets.UTF_8))
                .containsExactly("\"2\"", "\"3\"", "\"4\"");
        assertThat(h.since("p", "c", NOW + 3, 10, NOW + 5)).hasSize(2);
        assertThat(h.since("p", "c", 0, 1, NOW + 5)).hasSize(1);
        assertThat(h.since("other", "c", 0, 10, NOW + 5)).isEmpty();
    }

    @Test
    void afterReplaysWhatFollowsAKnownIdAndIsEmptyForAnUnknownOne() {
        HistoryStore h = new HistoryStore(10, 10, 1 << 20, 60_000, 10, 1 << 20);
        UserBroadcast a = msg(NOW, "1");
        UserBroadcast b = msg(NOW + 1, "2");
        h.add("p", "c", a, NOW);
        h.add("p", "c", b, NOW + 1);
        assertThat(h.after("p", "c", a.id(), NOW + 2))
                .hasValueSatisfying(l ->
                        assertThat(l).extracting(HistoryStore.Entry::message).containsExactly(b));
        assertThat(h.after("p", "c", b.id(), NOW + 2))
                .hasValueSatisfying(l -> assertThat(l).isEmpty());
        assertThat(h.after("p", "c", "gone", NOW + 2)).isEmpty();
    }

    @Test
    void memoryIsBoundedByChannelsBytesAndTtl() {
        HistoryStore h = new HistoryStore(10, 2, 1 << 20, 60_000, 2, 1 << 20);
        h.add("p", "a", msg(NOW, "1"), NOW);
        h.add("p", "b", msg(NOW, "1"), NOW + 1);
        h.add("p", "c", msg(NOW, "1"), NOW + 2);
        assertThat(h.channels()).isEqualTo(2);
        assertThat(h.since("p", "a", 0, 10, NOW + 3)).isEmpty(); // stalest channel went first

        HistoryStore small = new HistoryStore(10, 100, 1000, 60_000, 100, 1000);
        for (int i = 0; i < 20; i++) {
            small.add("p", "ch" + i, msg(NOW, "x".repeat(300)), NOW + i);
        }
        assertThat(small.bytes()).isLessThanOrEqualTo(1000);

        HistoryStore ttl = new HistoryStore(10, 100, 1 << 20, 1_000, 100, 1 << 20);
        ttl.add("p", "c", msg(NOW, "1"), NOW);
        assertThat(ttl.since("p", "c", 0, 10, NOW + 2_000)).isEmpty();
        assertThat(ttl.channels()).isZero();
    }

    @Test
    void oneProjectBroadcastingOnTenThousandTopicsKeepsAnotherProjectsHistory() {
        // global room for 10,000 channels, 100 per project
        HistoryStore h = new HistoryStore(10, 10_000, 64L << 20, 600_000, 100, 1 << 20);
        h.add("victim", "room", msg(NOW, "\"hello\""), NOW);
        for (int i = 0; i < 10_000; i++) {
            h.add("attacker", "t" + i, msg(NOW + 1, "1"), NOW + 1);
        }
        assertThat(h.channels("attacker")).isEqualTo(100);
        assertThat(h.since("victim", "room", 0, 10, NOW + 2)).hasSize(1);
        // the attacker keeps its newest channels
        assertThat(h.since("attacker", "t9999", 0, 10, NOW + 2)).hasSize(1);
        assertThat(h.since("attacker", "t0", 0, 10, NOW + 2)).isEmpty();
        assertThat(h.channels()).isEqualTo(101);
    }

    @Test
    void oneProjectsLargeBroadcastsStayWithinItsByteShare() {
        HistoryStore h = new HistoryStore(100, 10_000, 64L << 20, 600_000, 1000, 100_000);
        h.add("victim", "room", msg(NOW, "\"hello\""), NOW);
        String big = "\"" + "x".repeat(20_000) + "\"";
        for (int i = 0; i < 50; i++) {
            h.add("attacker", "t" + (i % 5), msg(NOW + 1, big), NOW + 1);
        }
        assertThat(h.bytes("attacker")).isLessThanOrEqualTo(100_000);
        assertThat(h.since("victim", "room", 0, 10, NOW + 2)).hasSize(1);
        assertThat(h.bytes()).isEqualTo(h.bytes("attacker") + h.bytes("victim"));
    }

    @Test
    void aSingleChannelOverTheProjectShareKeepsOnlyItsNewestMessage() {
        HistoryStore h = new HistoryStore(100, 10_000, 64L << 20, 600_000, 1000, 1024);
        for (int i = 0; i < 3; i++) {
            h.add("p", "c", msg(NOW + i, "\"" + i + "x".repeat(5000) + "\""), NOW + i);
        }
        assertThat(h.since("p", "c", 0, 10, NOW + 3))
                .singleElement()
                .satisfies(e -> assertThat(new String(e.message().payload(), StandardCharsets.UTF_8))
                        .startsWith("\"2x"));
    }
}
