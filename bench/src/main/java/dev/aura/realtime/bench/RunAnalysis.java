package dev.aura.realtime.bench;

import java.util.List;

/**
 * The generated analysis of one run: which targets this run met and missed (each judged on its
 * median, as the row says), and how far the rounds of each timed figure disagreed. Computed from
 * the run's own rows and rounds only; it quotes no figure of another run.
 */
final class RunAnalysis {
    private RunAnalysis() {}

    static String render(Report r) {
        List<Report.Row> judged = r.rows.stream().filter(x -> x.met() != null).toList();
        long met = judged.stream().filter(Report.Row::met).count();
        StringBuilder sb = new StringBuilder("## Analysis of this run (generated)\n\n");
        sb.append(String.format(
                "%d of %d targets met, %d missed (each on the median of its valid rounds, cleared by their noise,"
                        + " where it has rounds; a figure with an invalid round is missed).%n%n",
                met, judged.size(), judged.size() - met));
        for (Report.Row x : judged) {
            sb.append("- ")
                    .append(x.met() ? "met" : "**missed**")
                    .append(": ")
                    .append(x.figure())
                    .append(" — ")
                    .append(firstClause(x.measured()))
                    .append(x.ratio().equals("–") ? "" : "; ratio " + x.ratio())
                    .append(" (target ")
                    .append(x.target())
                    .append("; ")
                    .append(x.why())
                    .append(")\n");
        }
        if (!r.rounds.isEmpty()) {
            sb.append("\nAgreement of the rounds (spread ÷ median; above 20 % the machine was busy and the median"
                    + " is the figure to trust):\n\n");
            for (Rounds x : r.rounds) {
                if (x.size() > 1) {
                    sb.append(String.format(
                            "- %s: %.0f %%%s%s%n",
                            x.figure,
                            100 * x.relativeSpread(),
                            x.relativeSpread() > 0.2 ? " (noisy)" : "",
                            x.invalidCount() == 0
                                    ? ""
                                    : "; " + x.invalidCount() + " of " + x.size() + " rounds INVALID: "
                                            + x.invalidSummary()));
                }
            }
        }
        return sb.append('\n').toString();
    }

    private static String firstClause(String measured) {
        int semi = measured.indexOf(';');
        return semi < 0 ? measured : measured.substring(0, semi);
    }
}
