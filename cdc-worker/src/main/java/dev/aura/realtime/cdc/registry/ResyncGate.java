package dev.aura.realtime.cdc.registry;

import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds change matching back after a NATS reconnect until the registry is whole again.
 *
 * <p>After a reconnect, the ws-front replicas that owned bindings must re-put them (the bucket
 * may have been lost with a restarted server) before changes are matched again: a replica re-puts
 * only after its own connection, and with it its subscription to the change subjects, is back,
 * so until then a published change would reach no one while the slot advances past it. At the
 * disconnect the gate records the replicas to wait for; any write of theirs after that moment
 * proves they are connected again (or never lost their connection). The gate opens when all of
 * them wrote, or {@code timeout} after the reconnect (a replica that died meanwhile never will;
 * its bindings expire with the max age).
 *
 * <p>KV write times come from the server's clock. No allowance for skew is needed: a server
 * clock behind ours only makes the gate wait longer (up to the timeout), never open too early.
 *
 * <p>Thread-safe: connection events arrive on jnats' connection thread, the shards ask
 * {@link #open} concurrently.
 */
final class ResyncGate {
    private static final Logger log = LoggerFactory.getLogger(ResyncGate.class);

    private final Clock clock;
    private final long timeoutMs;
    private volatile long sinceMs;
    private volatile long deadlineMs = Long.MAX_VALUE;
    private volatile Set<String> awaited = Set.of();

    ResyncGate(Clock clock, Duration timeout) {
        this.clock = clock;
        this.timeoutMs = timeout.toMillis();
    }

    /** NATS disconnected: wait, after the reconnect, for the replicas owning live entries of {@code view}. */
    synchronized void disconnected(SubscriptionIndex view) {
        if (!awaited.isEmpty()) {
            return; // still waiting since an earlier disconnect: keep its start
        }
        long now = clock.millis();
        Set<String> owners = view.liveOwners(now);
        sinceMs = now;
        deadlineMs = Long.MAX_VALUE; // counted from the reconnect
        awaited = owners;
        if (!owners.isEmpty()) {
            log.info(
                    "NATS disconnected: after the reconnect, change matching waits until {} replica(s) re-put their bindings "
                            + "(at most {} ms): {}",
                    owners.size(),
                    timeoutMs,
                    owners);
        }
    }

    /** NATS reconnected: the timeout starts now. */
    void reconnected() {
        deadlineMs = clock.millis() + timeoutMs;
    }

    /**
     * False from a disconnect until every awaited replica re-put an entry into {@code view}, or the
     * timeout after the reconnect passed.
     */
    boolean open(SubscriptionIndex view) {
        Set<String> owners = awaited;
        if (owners.isEmpty()) {
            return true;
        }
        long since = sinceMs;
        if (clock.millis() > deadlineMs) {
            log.warn(
                    "[RegistryResyncTimeout] replicas {} did not re-put their bindings within {} ms of the NATS reconnect; "
                            + "matching without them",
                    view.silentSince(owners, since),
                    timeoutMs);
            awaited = Set.of();
            return true;
        }
        if (view.silentSince(owners, since).isEmpty()) {
            awaited = Set.of();
            log.info("subscription registry re-synchronised {} ms after the NATS disconnect", clock.millis() - since);
            return true;
        }
        return false;
    }

    /** Replicas still awaited (for status messages). */
    Set<String> awaited(SubscriptionIndex view) {
        Set<String> owners = awaited;
        return owners.isEmpty() ? owners : view.silentSince(owners, sinceMs);
    }
}
