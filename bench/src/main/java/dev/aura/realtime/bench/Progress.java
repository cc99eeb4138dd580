package dev.aura.realtime.bench;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Waiting for a count that grows while work drains (events received, deliveries made). A
 * benchmark must not fail on a shortfall, it reports it: so the wait ends when the target is
 * reached, when the count has not moved for a stall period (the rest is not coming), or at a
 * hard maximum.
 */
final class Progress {
    private static final Duration POLL = Duration.ofMillis(5);

    private Progress() {}

    /** @return true when {@code count} reached {@code target} */
    static boolean await(LongSupplier count, long target, Duration stall, Duration max) {
        AtomicLong seen = new AtomicLong(-1);
        AtomicLong movedAt = new AtomicLong(System.nanoTime());
        try {
            Awaitility.await()
                    .atMost(max)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(POLL)
                    .until(() -> {
                        long now = count.getAsLong();
                        if (seen.getAndSet(now) != now) {
                            movedAt.set(System.nanoTime());
                        }
                        return now >= target || System.nanoTime() - movedAt.get() > stall.toNanos();
                    });
        } catch (ConditionTimeoutException e) {
            // the maximum passed; the caller reports what arrived
        }
        return count.getAsLong() >= target;
    }
}
