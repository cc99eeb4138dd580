package dev.aura.realtime.testkit;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Awaitility with the failure message a test needs: what was awaited, and the state at the
 * moment it gave up (a count, the missing ids, a service's log tail), computed only then. Use it
 * instead of a sleep whenever a test waits for something to become true.
 */
public final class Waits {
    private Waits() {}

    /**
     * Evaluates {@code condition} at once and then every {@code poll} until it is true. An
     * exception thrown by the condition ends the wait with that exception.
     *
     * @param what what is awaited, for the failure message (e.g. {@code "2,000 events"})
     * @param diagnostics the state to report on failure; evaluated only then
     * @throws AssertionError after {@code timeout}: {@code <what> not reached within <timeout>: <diagnostics>}
     */
    public static void until(
            String what, Duration timeout, Duration poll, Callable<Boolean> condition, Supplier<String> diagnostics) {
        try {
            Awaitility.await()
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(poll)
                    .until(condition);
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(what + " not reached within " + timeout + ": " + diagnostics.get(), e);
        }
    }
}
