package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import java.time.Duration;
import java.util.Objects;
import java.util.function.LongSupplier;

/**
 * The {@link LeaderGate} of one Kubernetes leadership term.
 *
 * <p>Passes while the lock still names us and the last successful renewal is at most the renew
 * deadline old; trips for good once {@link #revoke(String)} was called (loss or shutdown).
 * Called from the work thread; revoked from the elector or closing thread.
 */
final class TermFence implements LeaderGate {
    private final RenewTrackingLock lock;
    private final LongSupplier nanoClock;
    private final long renewDeadlineNanos;
    private final long epoch;
    private volatile String revokedBecause;

    TermFence(RenewTrackingLock lock, LongSupplier nanoClock, Duration renewDeadline, long epoch) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.renewDeadlineNanos = renewDeadline.toNanos();
        this.epoch = epoch;
    }

    @Override
    public void checkFence() throws FencedException {
        String failure = failure();
        if (failure != null) {
            throw new FencedException(failure);
        }
    }

    @Override
    public long leaseEpoch() {
        return epoch;
    }

    /** Ends the term: every later check throws with this reason. */
    void revoke(String reason) {
        if (revokedBecause == null) {
            revokedBecause = reason;
        }
    }

    /** Why the fence does not pass, or null when it does. */
    String failure() {
        String revoked = revokedBecause;
        if (revoked != null) {
            return revoked;
        }
        if (!lock.holding()) {
            return "lease no longer names this process as holder";
        }
        long ageNanos = nanoClock.getAsLong() - lock.lastRenewNanos();
        if (ageNanos > renewDeadlineNanos) {
            return "last successful lease renewal was " + ageNanos / 1_000_000 + " ms ago, over the renew deadline of "
                    + renewDeadlineNanos / 1_000_000 + " ms";
        }
        return null;
    }
}
