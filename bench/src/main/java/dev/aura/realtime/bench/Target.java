package dev.aura.realtime.bench;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * A figure's target as one object (issue 39): its text is written from the same bounds its
 * predicate tests, so the two cannot drift apart ("≥ 10,000 msg/s" accepts 10,000 and more, never
 * 9,800).
 *
 * <p>A target is one or more {@link Clause}s, each a bound on one quantity of a figure's
 * {@link Rounds}: its value, its ratio to the baseline, or a named metric ("p99"). On rounds a
 * clause is met only when the figure has at least {@link #MIN_ROUNDS} rounds, none of them invalid,
 * and the median of the valid rounds clears the bound by the rounds' noise: the median absolute
 * deviation (MAD) of that quantity ({@code median − MAD ≥ bound}, or {@code median + MAD ≤
 * bound}). A figure measured once ({@link #judgeOnce}) has no noise to clear.
 */
final class Target {
    /** Fewer valid rounds than this never meet a target (issue 39: at least 5 alternating rounds). */
    static final int MIN_ROUNDS = 5;

    /**
     * One bound.
     *
     * @param rounds which of the figure's {@link Rounds} it judges, by key ("" when the figure has one)
     * @param quantity "value", "ratio" or a metric's name (see {@link Rounds#series})
     * @param label what the quantity is, for the text ("p99"), may be empty
     * @param atLeast true for ≥, false for ≤
     * @param bound the bound, in the quantity's unit
     * @param unit the unit written after the bound ("ms", "× Debezium")
     */
    record Clause(String rounds, String quantity, String label, boolean atLeast, double bound, String unit) {
        String text() {
            String u = unit.isEmpty() || unit.startsWith("×") || unit.startsWith("%") ? unit : " " + unit;
            return (label.isEmpty() ? "" : label + " ") + (atLeast ? "≥ " : "≤ ") + number(bound) + u;
        }

        boolean holds(double v) {
            return !Double.isNaN(v) && (atLeast ? v >= bound : v <= bound);
        }

        Clause on(String key) {
            return new Clause(key, quantity, label, atLeast, bound, unit);
        }
    }

    /** The verdict: met, and why not (or how it cleared). */
    record Verdict(boolean met, String why) {}

    private final List<Clause> clauses;

    private Target(List<Clause> clauses) {
        this.clauses = List.copyOf(clauses);
    }

    static Target of(Clause... clauses) {
        return new Target(Arrays.asList(clauses));
    }

    static Clause atLeast(String quantity, String label, double bound, String unit) {
        return new Clause("", quantity, label, true, bound, unit);
    }

    static Clause atMost(String quantity, String label, double bound, String unit) {
        return new Clause("", quantity, label, false, bound, unit);
    }

    List<Clause> clauses() {
        return clauses;
    }

    /** "p50 ≤ 10 ms, p99 ≤ 50 ms" */
    String text() {
        return clauses.stream().map(Clause::text).collect(Collectors.joining(", "));
    }

    /** Judges every clause on the one {@link Rounds} of the figure. */
    Verdict judge(Rounds r) {
        return judge(key -> r);
    }

    /** Judges each clause on the {@link Rounds} its key names. */
    Verdict judge(Function<String, Rounds> lookup) {
        List<String> failed = new ArrayList<>();
        List<String> cleared = new ArrayList<>();
        for (Clause c : clauses) {
            Rounds r = lookup.apply(c.rounds());
            if (r.invalidCount() > 0) {
                failed.add(c.text() + ": " + r.invalidCount() + " invalid round(s) (" + r.invalidSummary() + ")");
                continue;
            }
            if (r.validCount() < MIN_ROUNDS) {
                failed.add(c.text() + ": " + r.validCount() + " rounds, a verdict needs " + MIN_ROUNDS);
                continue;
            }
            double[] q = r.series(c.quantity());
            double median = Rounds.median(q);
            double noise = Rounds.mad(q);
            double edge = c.atLeast() ? median - noise : median + noise;
            String m = String.format("median %s, noise (MAD) %s", number(round3(median)), number(round3(noise)));
            if (!c.holds(median)) {
                failed.add(c.text() + ": " + m);
            } else if (!c.holds(edge)) {
                failed.add(c.text() + ": " + m + ", does not clear the bound by its noise");
            } else {
                cleared.add(c.text() + ": " + m);
            }
        }
        return failed.isEmpty()
                ? new Verdict(true, String.join("; ", cleared))
                : new Verdict(false, String.join("; ", failed));
    }

    /**
     * Judges a figure measured once: each clause's quantity from {@code values} (keyed by quantity);
     * a missing value fails its clause.
     */
    Verdict judgeOnce(Map<String, Double> values) {
        List<String> failed = new ArrayList<>();
        for (Clause c : clauses) {
            Double v = values.get(c.quantity());
            if (v == null || !c.holds(v)) {
                failed.add(c.text() + ": " + (v == null || v.isNaN() ? "not measured" : number(round3(v))));
            }
        }
        return failed.isEmpty() ? new Verdict(true, "measured once") : new Verdict(false, String.join("; ", failed));
    }

    private static double round3(double v) {
        return Double.isNaN(v) ? v : Math.round(v * 1000) / 1000.0;
    }

    /** 10000 → "10,000"; 0.9 → "0.9"; 1.5 → "1.5" (the bound exactly as the predicate tests it). */
    static String number(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (v == Math.rint(v) && Math.abs(v) < 1e15) {
            return String.format("%,d", (long) v);
        }
        return new BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString();
    }
}
