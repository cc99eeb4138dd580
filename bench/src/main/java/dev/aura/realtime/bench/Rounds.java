package dev.aura.realtime.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToDoubleFunction;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The rounds of one timed figure: each round's measurement ({@link Sample}) beside the baseline
 * measured in the same round (null when the figure has none), kept in the order they ran so the
 * report lists every one with its validity.
 *
 * <p>A round is <b>invalid</b> (issue 39) when either side has no data, did not complete
 * (received ≠ expected), beats its own ceiling or says why itself ({@link Sample#reasons}), or
 * when its CPU per unit is more than {@link #CPU_FACTOR}× off the median of the same side's
 * rounds that are sound on their own (a round that did a fraction of the work, or counted someone
 * else's). Medians, spreads
 * and ratios use the valid rounds only; an invalid round fails its figure's {@link Target}
 * instead of entering a median.
 */
final class Rounds {
    /** A round's CPU per unit this many times above or below its siblings' median makes it invalid. */
    static final double CPU_FACTOR = 2.0;

    /** One round: ours, the baseline (null: none), a free note and any further metrics by name. */
    record Round(Sample value, Sample baseline, String detail, Map<String, Double> metrics) {
        double ratio() {
            return baseline == null ? Double.NaN : value.value() / baseline.value();
        }
    }

    final String figure;
    final String unit;
    final String baselineLabel;
    final List<Round> rounds = new ArrayList<>();

    /**
     * @param figure the figure's name as in the table
     * @param unit the unit of value and baseline, e.g. "rows/s"
     * @param baselineLabel what the baseline is, e.g. "raw pgjdbc stream"; null when there is none
     */
    Rounds(String figure, String unit, String baselineLabel) {
        this.figure = figure;
        this.unit = unit;
        this.baselineLabel = baselineLabel;
    }

    Rounds add(Sample value, Sample baseline, String detail) {
        rounds.add(new Round(value, baseline, detail == null ? "" : detail, new LinkedHashMap<>()));
        return this;
    }

    /** A round of bare values (nothing counted): valid unless a value is missing. */
    Rounds add(double value, double baseline, String detail) {
        return add(Sample.of(value), baselineLabel == null ? null : Sample.of(baseline), detail);
    }

    Rounds add(double value) {
        return add(value, Double.NaN, "");
    }

    /** Records a further metric of the last round (e.g. "p99"), judged by a {@link Target} clause. */
    Rounds metric(String name, double v) {
        rounds.getLast().metrics().put(name, v);
        return this;
    }

    int size() {
        return rounds.size();
    }

    /** Why round {@code i} is invalid; empty when it is valid. */
    List<String> reasons(int i) {
        Round r = rounds.get(i);
        List<String> why = new ArrayList<>(r.value().reasons());
        cpuOutlier(i, Round::value).ifPresent(why::add);
        if (baselineLabel != null) {
            if (r.baseline() == null) {
                why.add("no baseline measured");
            } else {
                r.baseline().reasons().forEach(x -> why.add("baseline " + x));
                cpuOutlier(i, Round::baseline).ifPresent(x -> why.add("baseline " + x));
            }
        }
        for (Map.Entry<String, Double> m : r.metrics().entrySet()) {
            if (m.getValue().isNaN()) {
                why.add("no data for " + m.getKey());
            }
        }
        return why;
    }

    private java.util.Optional<String> cpuOutlier(int i, java.util.function.Function<Round, Sample> side) {
        // the siblings: the same side's rounds that are sound on their own (an incomplete round's CPU went
        // into waiting for what never came)
        double[] all = rounds.stream()
                .map(side)
                .filter(x -> x != null && x.reasons().isEmpty())
                .mapToDouble(Sample::cpuPerUnit)
                .filter(d -> !Double.isNaN(d))
                .toArray();
        Sample s = side.apply(rounds.get(i));
        if (all.length < 3 || s == null || Double.isNaN(s.cpuPerUnit())) {
            return java.util.Optional.empty();
        }
        double m = median(all);
        double x = s.cpuPerUnit() / m;
        if (x > CPU_FACTOR || x < 1 / CPU_FACTOR) {
            return java.util.Optional.of(String.format(
                    "CPU per unit %.2f× its siblings' median (%.3f ms vs %.3f ms)", x, s.cpuPerUnit() * 1e3, m * 1e3));
        }
        return java.util.Optional.empty();
    }

    boolean valid(int i) {
        return reasons(i).isEmpty();
    }

    int validCount() {
        return (int) IntStream.range(0, size()).filter(this::valid).count();
    }

    int invalidCount() {
        return size() - validCount();
    }

    /** "round 3: incomplete: 99,990 of 100,000 received; round 5: ..." */
    String invalidSummary() {
        return IntStream.range(0, size())
                .filter(i -> !valid(i))
                .mapToObj(i -> "round " + (i + 1) + ": " + String.join(", ", reasons(i)))
                .collect(Collectors.joining("; "));
    }

    /** A quantity of the valid rounds: null or "value", "baseline", "ratio", or a metric's name. */
    double[] series(String quantity) {
        return series(quantity, true);
    }

    /** The median of a quantity over every round, valid or not (what an invalid figure measured, for the notes). */
    double medianOfAll(String quantity) {
        return median(series(quantity, false));
    }

    private double[] series(String quantity, boolean validOnly) {
        ToDoubleFunction<Round> f = switch (quantity == null ? "value" : quantity) {
            case "value" -> r -> r.value().value();
            case "baseline" ->
                r -> r.baseline() == null ? Double.NaN : r.baseline().value();
            case "ratio" -> Round::ratio;
            default -> r -> r.metrics().getOrDefault(quantity, Double.NaN);
        };
        return IntStream.range(0, size())
                .filter(i -> !validOnly || valid(i))
                .mapToDouble(i -> f.applyAsDouble(rounds.get(i)))
                .toArray();
    }

    double median() {
        return median(series("value"));
    }

    double min() {
        return Arrays.stream(series("value")).min().orElse(Double.NaN);
    }

    double max() {
        return Arrays.stream(series("value")).max().orElse(Double.NaN);
    }

    double medianBaseline() {
        return median(series("baseline"));
    }

    /** The median of the valid rounds' ratios (value ÷ the same round's baseline); NaN without a baseline. */
    double medianRatio() {
        return median(series("ratio"));
    }

    double minRatio() {
        return Arrays.stream(series("ratio")).min().orElse(Double.NaN);
    }

    double maxRatio() {
        return Arrays.stream(series("ratio")).max().orElse(Double.NaN);
    }

    double medianMetric(String name) {
        return median(series(name));
    }

    /** Spread as a fraction of the median: (max − min) ÷ median. */
    double relativeSpread() {
        return (max() - min()) / median();
    }

    /**
     * The median of {@code values}; the mean of the middle two for an even count; NaN when empty
     * or when any value is NaN (a missing value is never dropped silently: the caller's round is
     * invalid, see {@link #reasons}).
     */
    static double median(double[] values) {
        if (values.length == 0 || Arrays.stream(values).anyMatch(Double::isNaN)) {
            return Double.NaN;
        }
        double[] v = Arrays.stream(values).sorted().toArray();
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }

    /** The median absolute deviation of {@code values} from their median: the noise a target must clear. */
    static double mad(double[] values) {
        double m = median(values);
        return median(Arrays.stream(values).map(v -> Math.abs(v - m)).toArray());
    }

    /** A value in this figure's unit: one decimal for milliseconds, none for rates. */
    String fmt(double v) {
        return Double.isNaN(v) ? "–" : unit.equals("ms") ? String.format("%.1f", v) : Report.f0(v);
    }

    /** "median 12,345 rows/s (spread 11,000–13,000, 5 valid of 5 rounds)" */
    String summary() {
        return String.format(
                "median %s %s (spread %s–%s, %d valid of %d rounds)",
                fmt(median()), unit, fmt(min()), fmt(max()), validCount(), size());
    }

    /** "median 1.53× (spread 1.40–1.61×)"; "–" without a baseline. */
    String ratioSummary() {
        if (baselineLabel == null) {
            return "–";
        }
        return String.format("median %.2f× (spread %.2f–%.2f×)", medianRatio(), minRatio(), maxRatio());
    }

    /** Every round in order, invalid ones marked: "12,345 / 11,000 (invalid) / 13,000". */
    String values() {
        return IntStream.range(0, size())
                .mapToObj(i -> fmt(rounds.get(i).value().value()) + (valid(i) ? "" : " (invalid)"))
                .collect(Collectors.joining(" / "));
    }

    /** A markdown table listing every round: value, baseline, ratio, counts and CPU, validity, note. */
    String markdown() {
        StringBuilder sb = new StringBuilder("| round | " + unit + " | baseline"
                + (baselineLabel == null ? "" : " (" + baselineLabel + ")")
                + " | ratio | counted, CPU, slot at start (ours; baseline) | valid | note |\n"
                + "|---|---|---|---|---|---|---|\n");
        for (int i = 0; i < rounds.size(); i++) {
            Round r = rounds.get(i);
            boolean nb = r.baseline() == null;
            List<String> why = reasons(i);
            String evidence =
                    r.value().describe() + (nb ? "" : "; " + r.baseline().describe());
            String metrics = r.metrics().entrySet().stream()
                    .map(e -> e.getKey() + " " + fmt(e.getValue()))
                    .collect(Collectors.joining(", "));
            sb.append("| ")
                    .append(i + 1)
                    .append(" | ")
                    .append(fmt(r.value().value()))
                    .append(" | ")
                    .append(nb ? "–" : fmt(r.baseline().value()))
                    .append(" | ")
                    .append(nb ? "–" : Report.f2(r.ratio()) + "×")
                    .append(" | ")
                    .append(evidence.isBlank() ? "–" : evidence)
                    .append(" | ")
                    .append(why.isEmpty() ? "yes" : "**no**: " + String.join("; ", why))
                    .append(" | ")
                    .append(metrics.isEmpty() ? "" : metrics + (r.detail().isEmpty() ? "" : "; "))
                    .append(r.detail())
                    .append(" |\n");
        }
        sb.append("| **median** (valid rounds) | **")
                .append(fmt(median()))
                .append("** | ")
                .append(baselineLabel == null ? "–" : fmt(medianBaseline()))
                .append(" | ")
                .append(baselineLabel == null ? "–" : "**" + Report.f2(medianRatio()) + "×**")
                .append(" | | ")
                .append(validCount())
                .append(" of ")
                .append(size())
                .append(" | spread ")
                .append(fmt(min()))
                .append("–")
                .append(fmt(max()))
                .append(" |\n");
        return sb.toString();
    }
}
