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

    void row(String figure, String measured, String baseline, String ratio, String target, Boolean met) {
        rows.add(new Row(figure, measured, baseline, ratio, target, met));
        System.out.printf(
                "  %-44s %s | baseline %s | %s | target %s %s%n",
                figure, measured, baseline, ratio, target, met == null ? "" : met ? "MET" : "MISSED");
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
