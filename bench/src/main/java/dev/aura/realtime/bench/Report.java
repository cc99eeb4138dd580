package dev.aura.realtime.bench;

import java.util.ArrayList;
import java.util.List;

/** The run's results: one table of figures plus evidence sections, printed and written as markdown. */
final class Report {
    /** One line of the table. {@code met} is null when the figure has no target. */
    record Row(String figure, String measured, String baseline, String ratio, String target, Boolean met) {}

    final List<Row> rows = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    final List<String> evidence = new ArrayList<>();
    /** Every timed figure's rounds, listed one by one in the report. */
    final List<Rounds> rounds = new ArrayList<>();
    /** What this run can and cannot show (quick run, sizes, profiling), printed in the report header. */
    final List<String> header = new ArrayList<>();

    /**
     * Adds a row. A row without a baseline must say why: a bare "–" baseline becomes
     * "– (no baseline: not given)" and a warning is printed, so the omission shows in the report.
     */
    void row(String figure, String measured, String baseline, String ratio, String target, Boolean met) {
        if (baseline == null || baseline.isBlank() || baseline.equals("–")) {
            System.err.println("bench: row without a baseline or a reason: " + figure);
            baseline = "– (no baseline: not given)";
        }
        rows.add(new Row(figure, measured, baseline, ratio, target, met));
        System.out.printf(
                "  %-44s %s | baseline %s | %s | target %s %s%n",
                figure, measured, baseline, ratio, target, met == null ? "" : met ? "MET" : "MISSED");
    }

    /**
     * A row for a timed figure of several rounds: measured = the median, its spread and every
     * round's value; ratio = the median of the per-round ratios to the same round's baseline. The
     * rounds are also listed in the report's "Rounds" section. {@code met} must come from the
     * median ({@link Rounds#atLeast}, {@link Rounds#atMost}).
     */
    void row(Rounds r, String measuredExtra, String baseline, String target, Boolean met) {
        rounds.add(r);
        row(
                r.figure,
                r.summary() + "; rounds: " + r.values() + (measuredExtra == null ? "" : "; " + measuredExtra),
                baseline,
                r.ratioSummary(),
                target,
                met);
    }

    void note(String text) {
        notes.add(text);
        System.out.println("  note: " + text);
    }

    void evidence(String title, String markdown) {
        evidence.add("### " + title + "\n\n" + markdown);
    }

    String table() {
        StringBuilder sb = new StringBuilder(
                "| figure | measured | baseline (same run) | ratio | target | met |\n|---|---|---|---|---|---|\n");
        for (Row r : rows) {
            sb.append("| ")
                    .append(r.figure())
                    .append(" | ")
                    .append(r.measured())
                    .append(" | ")
                    .append(r.baseline())
                    .append(" | ")
                    .append(r.ratio())
                    .append(" | ")
                    .append(r.target())
                    .append(" | ")
                    .append(r.met() == null ? "–" : r.met() ? "yes" : "**no**")
                    .append(" |\n");
        }
        return sb.toString();
    }

    static String f0(double v) {
        return String.format("%,.0f", v);
    }

    static String f2(double v) {
        return String.format("%.2f", v);
    }
}
