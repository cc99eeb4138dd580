package dev.aura.realtime.cdc.leader;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.cdc.fence.FencedException;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The fence against a hand-written lock and a clock the test moves. */
class TermFenceTest {
    private static final Duration DEADLINE = Duration.ofSeconds(12);

    private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
    private final FakeLock delegate = new FakeLock();
    private final RenewTrackingLock lock = new RenewTrackingLock(delegate, nanos::get);

    @Test
    void passesUntilTheLastRenewalIsOlderThanTheRenewDeadline() throws Exception {
        renew();
        TermFence fence = new TermFence(lock, nanos::get, DEADLINE, 7);
        advance(Duration.ofSeconds(12));
        assertThatCode(fence::checkFence).doesNotThrowAnyException();
        advance(Duration.ofMillis(1));
        assertThatThrownBy(fence::checkFence)
                .isInstanceOf(FencedException.class)
                .hasMessageContaining("renew deadline");
        renew();
        assertThatCode(fence::checkFence).doesNotThrowAnyException();
        assertThat(fence.leaseEpoch()).isEqualTo(7);
    }

    @Test
    void renewalCountsFromWhenTheReadStarted_notWhenTheWriteReturned() {
        lock.get(null);
        advance(Duration.ofSeconds(3)); // a slow API round trip
        lock.update(null, record("me"));
        TermFence fence = new TermFence(lock, nanos::get, DEADLINE, 0);
        advance(Duration.ofSeconds(10));
        assertThat(fence.failure()).contains("13000 ms ago");
    }

    @Test
    void failedRenewalsDoNotExtendTheFence() {
        renew();
        TermFence fence = new TermFence(lock, nanos::get, DEADLINE, 0);
        delegate.failing = true;
        advance(Duration.ofSeconds(13));
        assertThatThrownBy(() -> lock.get(null)).isInstanceOf(KubernetesClientException.class);
        assertThat(fence.failure()).contains("renew deadline");
        assertThat(lock.lastError()).contains("lease read failed");
    }

    @Test
    void tripsForGoodWhenRevokedOrWhenAnotherHolderIsSeen() {
        renew();
        TermFence fence = new TermFence(lock, nanos::get, DEADLINE, 0);
        fence.revoke("leadership lost");
        renew();
        assertThat(fence.failure()).isEqualTo("leadership lost");

        TermFence next = new TermFence(lock, nanos::get, DEADLINE, 1);
        delegate.stored = record("other");
        lock.get(null);
        assertThat(next.failure()).contains("no longer names this process");
    }

    private void renew() {
        lock.get(null);
        lock.update(null, record("me"));
    }

    private void advance(Duration by) {
        nanos.addAndGet(by.toNanos());
    }

    private static LeaderElectionRecord record(String holder) {
        ZonedDateTime now = ZonedDateTime.now();
        return new LeaderElectionRecord(holder, Duration.ofSeconds(15), now, now, 0);
    }

    /** Stores one record in memory; optionally fails every call like an unreachable API server. */
    private static final class FakeLock implements Lock {
        LeaderElectionRecord stored;
        boolean failing;

        @Override
        public LeaderElectionRecord get(KubernetesClient client) {
            if (failing) {
                throw new IllegalStateException("connection refused");
            }
            return stored;
        }

        @Override
        public void create(KubernetesClient client, LeaderElectionRecord record) {
            stored = record;
        }

        @Override
        public void update(KubernetesClient client, LeaderElectionRecord record) {
            stored = record;
        }

        @Override
        public String identity() {
            return "me";
        }

        @Override
        public String describe() {
            return "fake lock";
        }
    }
}
