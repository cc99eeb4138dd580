package dev.aura.realtime.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The rounds of one timed figure: each round's measured value beside the baseline measured in the
 * same round (NaN when the figure has none), kept in the order they ran so the report can list every
 * one. A figure's target is judged on the median only ({@link #median}, {@link #medianRatio}); the
 * spread (min–max) says how far the rounds disagreed.
 */
final class Rounds {
    /** One round: {@code value} and its {@code baseline} (NaN: none) in the figure's unit, plus a free note. */
    record Round(double value, double baseline, String detail) {
        double ratio() {
            return value / baseline;
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

    Rounds add(double value, double baseline, String detail) {
        rounds.add(new Round(value, baseline, detail == null ? "" : detail));
        return this;
    }

    Rounds add(double value) {
        return add(value, Double.NaN, "");
    }

    int size() {
        return rounds.size();
    }

    double median() {
        return median(rounds.stream().mapToDouble(Round::value).toArray());
    }

    double min() {
        return rounds.stream().mapToDouble(Round::value).min().orElse(Double.NaN);
    }

    double max() {
        return rounds.stream().mapToDouble(Round::value).max().orElse(Double.NaN);
    }

    double medianBaseline() {
        return median(rounds.stream().mapToDouble(Round::baseline).toArray());
    }

    /** The median of the per-round ratios (value ÷ the same round's baseline); NaN without a baseline. */
    double medianRatio() {
        return median(rounds.stream().mapToDouble(Round::ratio).toArray());
    }

    double minRatio() {
        return rounds.stream().mapToDouble(Round::ratio).min().orElse(Double.NaN);
    }

    double maxRatio() {
        return rounds.stream().mapToDouble(Round::ratio).max().orElse(Double.NaN);
    }

    /** Spread as a fraction of the median: (max − min) ÷ median. */
    double relativeSpread() {
        return (max() - min()) / median();
    }

    /** The median of {@code values}, ignoring NaN; the mean of the middle two for an even count; NaN when empty. */
    static double median(double[] values) {
        double[] v =
                Arrays.stream(values).filter(d -> !Double.isNaN(d)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        int mid = v.length / 2;
        return v.length % 2 == 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
    }

    /** A value in this figure's unit: one decimal for milliseconds, none for rates. */
    String fmt(double v) {
        return unit.equals("ms") ? String.format("%.1f", v) : Report.f0(v);
    }

    /** "median 12,345 rows/s (spread 11,000–13,000, 3 rounds)" */
    String summary() {
        return String.format(
                "median %s %s (spread %s–%s, %d rounds)", fmt(median()), unit, fmt(min()), fmt(max()), size());
    }

    /** "median 1.53× (spread 1.40–1.61×)"; "–" without a baseline. */
    String ratioSummary() {
        if (Double.isNaN(medianRatio())) {
            return "–";
        }
        return String.format("median %.2f× (spread %.2f–%.2f×)", medianRatio(), minRatio(), maxRatio());
    }

    /** Every round in order: "12,345 / 11,000 / 13,000". */
    String values() {
        return rounds.stream().map(r -> fmt(r.value())).collect(Collectors.joining(" / "));
    }

    /** A markdown table listing every round: value, baseline, ratio, note. */
    String markdown() {
        StringBuilder sb = new StringBuilder(
                "| round | " + unit + " | baseline" + (baselineLabel == null ? "" : " (" + baselineLabel + ")")
                        + " | ratio | note |\n|---|---|---|---|---|\n");
        for (int i = 0; i < rounds.size(); i++) {
            Round r = rounds.get(i);
            boolean nb = Double.isNaN(r.baseline());
            sb.append("| ")
                    .append(i + 1)
                    .append(" | ")
                    .append(fmt(r.value()))
                    .append(" | ")
                    .append(nb ? "–" : fmt(r.baseline()))
                    .append(" | ")
                    .append(nb ? "–" : Report.f2(r.ratio()) + "×")
                    .append(" | ")
                    .append(r.detail())
                    .append(" |\n");
        }
        sb.append("| **median** | **")
                .append(fmt(median()))
                .append("** | ")
                .append(Double.isNaN(medianBaseline()) ? "–" : fmt(medianBaseline()))
                .append(" | ")
                .append(Double.isNaN(medianRatio()) ? "–" : "**" + Report.f2(medianRatio()) + "×**")
                .append(" | spread ")
                .append(fmt(min()))
                .append("–")
                .append(fmt(max()))
                .append(" |\n");
        return sb.toString();
    }

    /** Met when the median is at least {@code target} (NaN never meets). */
    static boolean atLeast(double median, double target) {
        return !Double.isNaN(median) && median >= target;
    }

    /** Met when the median is at most {@code target} (NaN never meets). */
    static boolean atMost(double median, double target) {
        return !Double.isNaN(median) && median <= target;
    }
}
