package dev.aura.realtime.bench;

import java.util.Arrays;

/** Latency samples (microseconds) and their percentiles; appends are synchronized, reads copy. */
final class Stats {
    private long[] values = new long[1024];
    private int size;

    synchronized void add(long micros) {
        if (size == values.length) {
            values = Arrays.copyOf(values, size * 2);
        }
        values[size++] = micros;
    }

    synchronized int count() {
        return size;
    }

    /** The p-th percentile (0..100) in milliseconds, NaN without samples. */
    synchronized double percentileMs(double p) {
        if (size == 0) {
            return Double.NaN;
        }
        long[] sorted = Arrays.copyOf(values, size);
        Arrays.sort(sorted);
        int idx = (int) Math.ceil(p / 100.0 * size) - 1;
        return sorted[Math.max(0, Math.min(size - 1, idx))] / 1000.0;
    }

    String summary() {
        return String.format(
                "p50 %.1f / p95 %.1f / p99 %.1f ms (n=%d)",
                percentileMs(50), percentileMs(95), percentileMs(99), count());
    }
}
