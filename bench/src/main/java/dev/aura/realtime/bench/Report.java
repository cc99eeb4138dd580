package dev.aura.realtime.bench;

import java.util.ArrayList;
import java.util.List;

/** The run's results: one table of figures plus evidence sections, printed and written as markdown. */
final class Report {
    /**
     * One line of the table. {@code met} is null when the figure has no target; {@code why} says
     * how its target was judged (each clause's median and noise, invalid rounds), empty without one.
     */
    record Row(String figure, String measured, String baseline, String ratio, String target, Boolean met, String why) {}

    final List<Row> rows = new ArrayList<>();
    final List<String> notes = new ArrayList<>();
    final List<String> evidence = new ArrayList<>();
    /** Every timed figure's rounds, listed one by one in the report. */
    final List<Rounds> rounds = new ArrayList<>();
    /** What this run can and cannot show (quick run, sizes, profiling), printed in the report header. */
    final List<String> header = new ArrayList<>();

    /** A row judged by {@code target} ({@code verdict} from {@link Target#judge} or {@link Target#judgeOnce}). */
    void row(String figure, String measured, String baseline, String ratio, Target target, Target.Verdict verdict) {
        add(new Row(figure, measured, baseline(figure, baseline), ratio, target.text(), verdict.met(), verdict.why()));
    }

    /** A row without a target: {@code noTarget} says why ("– (reported: what a restart costs)"). */
    void info(String figure, String measured, String baseline, String ratio, String noTarget) {
        add(new Row(figure, measured, baseline(figure, baseline), ratio, noTarget, null, ""));
    }

    /**
     * A row for a timed figure of several rounds, judged by {@code target} on them: measured = the
     * median of the valid rounds, its spread and every round's value; ratio = the median of the
     * per-round ratios to the same round's baseline. The rounds are also listed, with their
     * validity, in the report's "Rounds" section.
     */
    void row(Rounds r, String measuredExtra, String baseline, Target target) {
        row(r, measuredExtra, baseline, target, target.judge(r));
    }

    /** As {@link #row(Rounds, String, String, Target)}, with a verdict judged on several figures' rounds. */
    void row(Rounds r, String measuredExtra, String baseline, Target target, Target.Verdict verdict) {
        rounds.add(r);
        row(r.figure, measured(r, measuredExtra), baseline, r.ratioSummary(), target, verdict);
    }

    /** A timed figure of several rounds without a target (reported beside another). */
    void info(Rounds r, String measuredExtra, String baseline, String noTarget) {
        rounds.add(r);
        info(r.figure, measured(r, measuredExtra), baseline, r.ratioSummary(), noTarget);
    }

    private static String measured(Rounds r, String extra) {
        return r.summary() + "; rounds: " + r.values() + (extra == null ? "" : "; " + extra);
    }

    /**
     * A row without a baseline must say why: a bare "–" baseline becomes "– (no baseline: not
     * given)" and a warning is printed, so the omission shows in the report.
     */
    private static String baseline(String figure, String baseline) {
        if (baseline == null || baseline.isBlank() || baseline.equals("–")) {
            System.err.println("bench: row without a baseline or a reason: " + figure);
            return "– (no baseline: not given)";
        }
        return baseline;
    }

    private void add(Row r) {
        rows.add(r);
        System.out.printf(
                "  %-44s %s | baseline %s | %s | target %s %s%n",
                r.figure(),
                r.measured(),
                r.baseline(),
                r.ratio(),
                r.target(),
                r.met() == null ? "" : (r.met() ? "MET (" : "MISSED (") + r.why() + ")");
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
