package dev.aura.realtime.bench;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.testkit.RegistryEntries;
import java.time.Duration;
import java.util.Map;

/**
 * Figure 7 (issue 17): matching cost against the number of bindings on other values. The same
 * backlog of single-row inserts into {@code bench_match(id, k, v)} (k cycling through 10,000
 * values) is drained by a fresh worker three times: with one unfiltered binding; with that binding
 * plus 10,000 {@code k=eq.N} bindings, one per value (the figure); and with 100 more that the
 * index cannot narrow (50 {@code v=like.%zzzN%}, 50 {@code id=lt.-N}, never matching; a note).
 * Every change matches the unfiltered binding and exactly one {@code k=eq} binding. The
 * registry's (table, column, eq-value) index makes a change touch only the bindings of the values
 * its row holds, so changes/s should stay close to the one-binding run. Rates are taken from the
 * first to the last event (the worker's start-up and registry load excluded); the first two
 * configurations are each drained twice and the better run counts (the machine is shared: one
 * run is easily disturbed, e.g. by the 20 s re-put of every binding landing inside a short
 * drain). Service-role bindings: no RLS query.
 */
final class MatchingBench {
    static final String TABLE = "bench_match";
    private static final int VALUES = 10_000;

    private final Stack s;
    private final ChangeCounter counter;
    private final Report report;

    MatchingBench(Stack s, ChangeCounter counter, Report report) {
        this.s = s;
        this.counter = counter;
        this.report = report;
    }

    static void createTable(Stack s) {
        s.pg.execute(
                "CREATE TABLE " + s.table(TABLE) + " (id bigserial PRIMARY KEY, k int NOT NULL, v text NOT NULL)",
                "CREATE PROCEDURE " + s.schema + ".bench_fill_match(n int) LANGUAGE plpgsql AS $$ BEGIN "
                        + "FOR i IN 1..n LOOP INSERT INTO " + s.table(TABLE)
                        + "(k, v) VALUES (i % " + VALUES + ", 'row ' || i); COMMIT; END LOOP; END $$");
    }

    void run(int rows) throws Exception {
        s.subscribe(TABLE, "service_role", null);
        double one = Math.max(drain(rows, java.util.List.of()), drain(rows, java.util.List.of()));
        for (int i = 0; i < VALUES; i++) {
            subscribe("k=eq." + i);
        }
        java.nio.file.Path jfr = s.runDir.resolve("matching-10k.jfr");
        double eq = drain(rows, s.profiler(jfr));
        s.stopWorker(); // writes the recording
        eq = Math.max(eq, drain(rows, java.util.List.of()));
        for (int i = 0; i < 50; i++) {
            subscribe("v=like.%zzz" + i + "%");
            subscribe("id=lt." + (-i));
        }
        double mixed = drain(rows, java.util.List.of());
        double ratio = eq / one;
        report.row(
                "7. matching, 10,001 bindings (10,000 k=eq.N) vs 1, " + rows / 1000 + "k single-row inserts",
                Report.f0(eq) + " changes/s with 10,001 bindings",
                Report.f0(one) + " changes/s with 1 binding",
                Report.f2(ratio) + "×",
                "≥ 0.8× (cost does not grow with bindings on other values)",
                ratio >= 0.8);
        report.note(String.format(
                "matching: with 100 more bindings the index cannot narrow (50 like, 50 lt, tested against every"
                        + " change): %,.0f changes/s = %.2f× the one-binding run",
                mixed, mixed / one));
        String hot = JfrHotMethods.summarize(jfr, null, 10);
        System.out.println(hot);
        report.evidence("Matching with 10,001 bindings: where the worker's time goes (informational)", hot);
    }

    private void subscribe(String filter) {
        SubscriptionEntry plain = RegistryEntries.binding(
                s.projectId, TABLE, RegistryEntries.claims("service_role", s.projectId), "bench");
        SubscriptionEntry entry = new SubscriptionEntry(
                plain.subId(),
                plain.projectId(),
                plain.table(),
                plain.event(),
                filter,
                plain.role(),
                plain.claims(),
                plain.expiresAtMs(),
                plain.instance());
        s.keep(entry.key(), RegistryEntries.put(s.client, entry));
    }

    /** Writes a backlog with the worker stopped, then times a fresh worker draining it. @return changes/s */
    private double drain(int rows, java.util.List<String> jvmArgs) throws Exception {
        s.stopWorker();
        s.pg.execute("CALL " + s.schema + ".bench_fill_match(" + rows + ")");
        counter.reset();
        s.startWorker(Map.of(), jvmArgs).waitForLog(CdcThroughputBench.STARTED, Duration.ofSeconds(90));
        boolean complete = counter.await(rows, 30_000, 600_000);
        double seconds = (counter.lastNanos() - counter.firstNanos()) / 1e9;
        if (!complete) {
            report.note("matching: only " + counter.count() + " of " + rows + " changes arrived");
        }
        return (counter.count() - 1) / Math.max(seconds, 1e-3);
    }
}
