package dev.aura.realtime.bench;

/**
 * The report header's account of what this run could and could not show: rounds, sizes (shrunk
 * to fit a full run in well under 20 minutes on a 2-core box; 10.5 min measured), warm-up, quick mode, profiling.
 */
final class RunHeader {
    private RunHeader() {}

    static void describe(Report report, BenchMain.Sizes z, boolean quick, int rounds, boolean profile, int scale) {
        report.header.add("Timed figures (1, 2, 2b, 27, 3, 5, 6, 7, 8, 8b, 9, 10) run " + rounds
                + " alternating rounds each (ours, baseline, ours, baseline ...; for CDC the order of stream, Debezium"
                + " and poll rotates each round); the table gives the median of the valid rounds and their spread"
                + " (min–max), the \"Rounds\" section lists every round with its validity.");
        report.header.add("Validity (issue 39): each round records what it was to handle and what it handled,"
                + " counted from its own reader's output only (CDC: the reader's Aura-Origin, distinct"
                + " Aura-Event-Ids, from the backlog's first LSN), its CPU, and where its slot stood when it started."
                + " A round that did not complete, beat its own ceiling, lacks a value, or whose CPU per unit is more"
                + " than " + Report.f0(Rounds.CPU_FACTOR) + "× off its siblings' median is INVALID: it never enters a"
                + " median, and its figure's target is missed. A target (one object: its text is written from the"
                + " bounds its predicate tests) is met only with at least " + Target.MIN_ROUNDS + " valid rounds and"
                + " none invalid, when the median clears each bound by the rounds' noise (their median absolute"
                + " deviation, MAD).");
        report.header.add("Processes under test are warm: the cdc-workers, Debezium (its own JVM, the worker's JVM"
                + " flags, its own NATS connection) and ws-front keep running through all rounds of a figure, paused"
                + " with SIGSTOP between their turns, after a warm-up backlog (CDC) or a warm-up segment at 1,000"
                + " rows/s (latency). Cold-start figures are reported once, in rows marked COLD.");
        report.header.add(String.format(
                "Sizes: CDC backlogs of %,d rows (200,000 before issue 25; shrunk so that %d rounds of both shapes"
                        + " fit), latency segments of %d s per rate after a %d s warm-up, fan-out bursts of %d s; RLS,"
                        + " matching, joins and storms as before.",
                z.cdcRows(), rounds, z.latencySeconds(), z.latencyWarmSeconds(), z.burstSeconds()));
        report.header.add("Memory and connection figures (4a, 4b, 4c) are not timed rounds: one run each"
                + (scale > 0 ? String.format("; figure 4c (%,d connections) is a single round", scale) : "")
                + "; their targets are judged on that run.");
        report.header.add(
                profile
                        ? "PROFILED RUN (--profile): every service records JFR (settings=profile); the figures carry the"
                                + " profiler's cost and are not the timed figures."
                        : "No profiler runs in the timed figures; `scripts/bench.sh --profile` makes a separate profiled run"
                                + " whose JFR summaries appear under \"Profiles\".");
        if (quick) {
            report.header.add("QUICK RUN: backlogs, segments and bursts are a fraction of a full run's and figure"
                    + " 4c is skipped. It shows that every figure runs and roughly where it stands; its ratios are"
                    + " indicative only (small backlogs are dominated by start-up and scheduling noise), and its"
                    + " met/missed verdicts do not count against the targets.");
        }
    }
}
