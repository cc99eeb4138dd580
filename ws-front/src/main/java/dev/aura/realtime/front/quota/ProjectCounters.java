package dev.aura.realtime.front.quota;

/** One project's counts on this replica ({@link ProjectQuotas}); guarded by its own monitor. */
final class ProjectCounters {
    /** What is counted per wall-clock second. */
    enum Kind {
        JOINS,
        CHECKS,
        EVENTS,
        BYTES,
        PRESENCE,
        REFUSED
    }

    int users;
    volatile long lastActiveMs;
    /** Wall-clock second ({@code ms / 1000}) that {@link #current} counts. */
    long second = Long.MIN_VALUE;

    final long[] current = new long[Kind.values().length];
    /** The counts of the second before {@link #second}, zero when that second saw nothing. */
    final long[] previous = new long[Kind.values().length];
    /** Refusals since this replica started counting the project, by {@link Refusal}. */
    final long[] refusedTotal = new long[Refusal.values().length];

    /** Counts one refusal (caller holds the monitor). */
    void refuse(Refusal what, long nowMs) {
        roll(nowMs);
        current[Kind.REFUSED.ordinal()]++;
        refusedTotal[what.ordinal()]++;
    }

    void roll(long nowMs) {
        long s = nowMs / 1000;
        if (s == second) {
            return;
        }
        for (int i = 0; i < current.length; i++) {
            previous[i] = s == second + 1 ? current[i] : 0;
            current[i] = 0;
        }
        second = s;
    }
}
