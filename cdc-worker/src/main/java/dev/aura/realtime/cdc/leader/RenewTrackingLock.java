package dev.aura.realtime.cdc.leader;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.Lock;
import java.util.Objects;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Decorates fabric8's {@code LeaseLock} to see every lease read and write, because
 * {@code LeaderElector} has no callback for a successful renewal.
 *
 * <p>fabric8 stamps the renew time, then reads the lease, then writes it, all inside one
 * synchronized {@code tryAcquireOrRenew}. We take the clock when the read starts and, once the
 * write of a record naming us succeeds, keep that reading as the last renewal: never later than
 * the renew time others see in the Lease, so our fence trips no later than theirs would expire.
 *
 * <p>Any non-Kubernetes runtime failure of the delegate is rethrown as a
 * {@link KubernetesClientException}: fabric8's acquire loop only retries those, and any other
 * exception would end its loop without ever completing the elector's future.
 *
 * <p>Written by the elector's thread (or the closing thread during release); read by any thread.
 */
final class RenewTrackingLock implements Lock {
    private final Lock delegate;
    private final LongSupplier nanoClock;

    private volatile long attemptStartNanos;
    private volatile long lastRenewNanos;
    private volatile boolean holding;
    private volatile LeaderElectionRecord lastObserved;
    private volatile String lastError;

    RenewTrackingLock(Lock delegate, LongSupplier nanoClock) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
    }

    @Override
    public LeaderElectionRecord get(KubernetesClient client) {
        attemptStartNanos = nanoClock.getAsLong();
        LeaderElectionRecord current = call("read", () -> delegate.get(client));
        lastObserved = current;
        if (current == null || !identity().equals(current.getHolderIdentity())) {
            holding = false;
        }
        return current;
    }

    @Override
    public void create(KubernetesClient client, LeaderElectionRecord record) {
        call("create", () -> {
            delegate.create(client, record);
            return null;
        });
        written(record);
    }

    @Override
    public void update(KubernetesClient client, LeaderElectionRecord record) {
        call("update", () -> {
            delegate.update(client, record);
            return null;
        });
        written(record);
    }

    @Override
    public String identity() {
        return delegate.identity();
    }

    @Override
    public String describe() {
        return delegate.describe();
    }

    /** Whether the last record we wrote or read names us as holder. */
    boolean holding() {
        return holding;
    }

    /** Clock reading (nanos) taken before the last successful renewal; meaningful only while {@link #holding()}. */
    long lastRenewNanos() {
        return lastRenewNanos;
    }

    /** The record last read or written, null before the first successful call or when the Lease does not exist. */
    LeaderElectionRecord lastObserved() {
        return lastObserved;
    }

    /** The failure of the last lease call, null when it succeeded. */
    String lastError() {
        return lastError;
    }

    private void written(LeaderElectionRecord record) {
        lastObserved = record;
        if (identity().equals(record.getHolderIdentity())) {
            lastRenewNanos = attemptStartNanos;
            holding = true;
        } else {
            holding = false;
        }
    }

    private <T> T call(String what, Supplier<T> call) {
        try {
            T result = call.get();
            lastError = null;
            return result;
        } catch (KubernetesClientException e) {
            lastError = "lease " + what + " failed: " + describeFailure(e);
            throw e;
        } catch (RuntimeException e) {
            lastError = "lease " + what + " failed: " + describeFailure(e);
            throw new KubernetesClientException(lastError, e);
        }
    }

    private static String describeFailure(Throwable e) {
        Throwable root = e;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        String message = e.getMessage();
        return root == e || root.getMessage() == null ? String.valueOf(message) : message + " (" + root + ")";
    }
}
