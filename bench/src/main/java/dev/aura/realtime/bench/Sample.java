package dev.aura.realtime.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * What one side (ours, or the baseline) of one round measured, with what shows that the round
 * measured only its own work (issue 39): how many units it was to handle ({@code expected}), how
 * many it handled, counted from its own output only ({@code received}), the CPU its process used,
 * the ceiling it cannot beat, and where its slot stood when it started. {@link Rounds} decides the
 * round's validity from these; a value of an invalid round never enters a median.
 *
 * @param value the measured figure in the figure's unit; NaN when nothing was measured
 * @param expected units the round was to handle (rows written, messages sent); -1 when not counted
 * @param received units it handled, from its own output only and de-duplicated; -1 when not counted
 * @param cpuSeconds CPU seconds its process used in the round; NaN when not measured
 * @param ceiling what {@code value} can at most be (a reader that shares no code with the product);
 *     NaN when there is none
 * @param start where its replication slot stood when the round started (see {@link SlotPosition}),
 *     empty when it has none
 * @param invalid reasons its measurement knows of itself (e.g. the writer did not offer the load);
 *     empty when none
 */
record Sample(
        double value,
        long expected,
        long received,
        double cpuSeconds,
        double ceiling,
        String start,
        List<String> invalid) {

    Sample {
        start = start == null ? "" : start;
        invalid = List.copyOf(invalid);
    }

    static Sample of(double value) {
        return new Sample(value, -1, -1, Double.NaN, Double.NaN, "", List.of());
    }

    /** The round's work: {@code received} of {@code expected} units (only a complete round is valid). */
    Sample counted(long expected, long received) {
        return new Sample(value, expected, received, cpuSeconds, ceiling, start, invalid);
    }

    Sample cpu(double seconds) {
        return new Sample(value, expected, received, seconds, ceiling, start, invalid);
    }

    Sample ceiling(double c) {
        return new Sample(value, expected, received, cpuSeconds, c, start, invalid);
    }

    Sample start(String position) {
        return new Sample(value, expected, received, cpuSeconds, ceiling, position, invalid);
    }

    /** Marks the sample invalid for a reason only its measurement knows. */
    Sample invalid(String reason) {
        List<String> r = new ArrayList<>(invalid);
        r.add(reason);
        return new Sample(value, expected, received, cpuSeconds, ceiling, start, r);
    }

    /** Marks it invalid when {@code condition} holds. */
    Sample invalidIf(boolean condition, String reason) {
        return condition ? invalid(reason) : this;
    }

    boolean counted() {
        return expected >= 0;
    }

    /** CPU seconds per unit handled; NaN when CPU or the count is unknown. */
    double cpuPerUnit() {
        long units = received > 0 ? received : expected;
        return Double.isNaN(cpuSeconds) || units <= 0 ? Double.NaN : cpuSeconds / units;
    }

    /** Why this sample alone is invalid (no data, incomplete, above its ceiling, its own reasons); empty when valid. */
    List<String> reasons() {
        List<String> r = new ArrayList<>();
        boolean incomplete = counted() && received != expected;
        if ((Double.isNaN(value) || Double.isInfinite(value)) && !incomplete) {
            r.add("no data");
        }
        if (incomplete) {
            r.add(
                    received < expected
                            ? "incomplete: " + received + " of " + expected + " received"
                            : "counted more than was sent: " + received + " of " + expected);
        }
        if (!Double.isNaN(ceiling) && value > ceiling) {
            r.add(String.format("beats its own ceiling (%s > %s)", Report.f0(value), Report.f0(ceiling)));
        }
        r.addAll(invalid);
        return r;
    }

    /** "100000/100000, CPU 4.3 s" (what the round's note shows of the count and CPU). */
    String describe() {
        StringBuilder sb = new StringBuilder();
        if (counted()) {
            sb.append(received).append('/').append(expected);
        }
        if (!Double.isNaN(cpuSeconds)) {
            sb.append(sb.isEmpty() ? "" : ", ").append(String.format("CPU %.1f s", cpuSeconds));
        }
        if (!start.isEmpty()) {
            sb.append(sb.isEmpty() ? "" : ", ").append(start);
        }
        return sb.toString();
    }
}
