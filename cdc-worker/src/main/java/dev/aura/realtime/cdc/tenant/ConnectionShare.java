package dev.aura.realtime.cdc.tenant;

import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A fair share of the tenant connections for one kind of statement: at most {@code size} run at
 * once, and one project at most half of them (at least one), so a project whose policies sleep or
 * flood cannot take the connections other projects' statements need. A caller that finds no room
 * within the checkout timeout gets {@link Busy}. Thread-safe.
 *
 * <p>{@link TenantDb#channelShare} is the private-channel statements' (docs/design.md H1, H2): the
 * read, write, replay and persist checks ({@code join.ChannelChecks}) and the janitor
 * ({@code upkeep.RealtimeUpkeep}) take turns in it.
 */
public final class ConnectionShare {
    /** Every connection this project (or all projects) may use stayed busy for the checkout timeout. */
    public static final class Busy extends Exception {
        Busy(String message) {
            super(message, null, false, false);
        }
    }

    /** What runs holding a place in the share. */
    @FunctionalInterface
    public interface Work<T> {
        T run() throws TenantDb.Unavailable, RunnerSession.TenantFailure;
    }

    private final Semaphore lane;
    private final int perProject;
    private final Duration checkout;
    private final ConcurrentHashMap<String, Semaphore> projects = new ConcurrentHashMap<>();

    ConnectionShare(int size, Duration checkout) {
        this.lane = new Semaphore(Math.max(1, size));
        this.perProject = Math.max(1, size / 2);
        this.checkout = checkout;
    }

    /** Runs {@code work} holding a place of the share and one of the project's ({@code projectSchema}'s) part of it. */
    public <T> T admitted(String projectSchema, Work<T> work)
            throws TenantDb.Unavailable, Busy, RunnerSession.TenantFailure {
        Semaphore share = projects.computeIfAbsent(projectSchema, k -> new Semaphore(perProject));
        long deadline = System.nanoTime() + checkout.toNanos();
        try {
            if (!share.tryAcquire(checkout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new Busy("this project's channel checks are all in use");
            }
            try {
                long left = Math.max(0, deadline - System.nanoTime());
                if (!lane.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                    throw new Busy("every connection for channel checks is in use");
                }
                try {
                    return work.run();
                } finally {
                    lane.release();
                }
            } finally {
                share.release();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Busy("interrupted");
        }
    }
}
