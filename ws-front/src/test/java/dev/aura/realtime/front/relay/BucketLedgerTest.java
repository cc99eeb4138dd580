package dev.aura.realtime.front.relay;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.KvBuckets;
import dev.aura.realtime.testkit.MutableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** A project's bytes in a bucket: live entries, replaced on re-put, and delete markers until the max age. */
class BucketLedgerTest {
    private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final BucketLedger ledger = new BucketLedger("b", Duration.ofSeconds(60), clock);

    @Test
    void chargesAreRefusedOverTheAllowanceAndAReputReplacesTheOldCharge() {
        assertThat(ledger.charge("p", "k1", 400, 1000)).isTrue();
        assertThat(ledger.charge("p", "k2", 700, 1000)).as("400 + 700 > 1000").isFalse();
        assertThat(ledger.bytes("p")).as("a refused charge changes nothing").isEqualTo(400);
        assertThat(ledger.charge("p", "k1", 900, 1000))
                .as("k1 re-put larger: 900")
                .isTrue();
        assertThat(ledger.charge("p", "k1", 100, 50))
                .as("shrinking is always allowed, even over the allowance")
                .isTrue();
        assertThat(ledger.bytes("p")).isEqualTo(100);
        assertThat(ledger.charge("q", "k1", 1000, 1000))
                .as("projects are apart")
                .isTrue();
        assertThat(ledger.totals()).containsEntry("p", 100L).containsEntry("q", 1000L);
    }

    @Test
    void aDeletedEntryIsChargedAsItsMarkerUntilTheMaxAge() {
        assertThat(ledger.charge("p", "k1", 500, 1000)).isTrue();
        ledger.release("p", "k1");
        long marker = KvBuckets.markerBytes("b", "k1");
        assertThat(ledger.bytes("p")).isEqualTo(marker);
        ledger.release("p", "k1"); // unknown now: no second marker
        assertThat(ledger.bytes("p")).isEqualTo(marker);
        clock.advance(Duration.ofSeconds(60));
        assertThat(ledger.bytes("p")).isZero();
        assertThat(ledger.totals()).isEmpty();
    }

    @Test
    void storedBytesCountTheSubjectTheValueAndTheOverhead() {
        assertThat(ledger.storedBytes("p.s", 100)).isEqualTo("$KV.b.p.s".length() + 100 + 32);
    }
}
