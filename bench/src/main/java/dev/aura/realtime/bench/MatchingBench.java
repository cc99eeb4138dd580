package dev.aura.realtime.bench;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import dev.aura.realtime.testkit.RegistryEntries;
import dev.aura.realtime.testkit.ServiceProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Figure 7 (issue 17): matching cost against the number of bindings on other values. The same
 * backlog of single-row inserts into {@code bench_match(id, k, v)} (k cycling through 10,000
 * values) is drained by a fresh worker with one unfiltered binding, and with that binding plus
 * 10,000 {@code k=eq.N} bindings, one per value (the figure), in alternating rounds (issue 39: the
 * 10,000 bindings are put before and deleted after each of their rounds; no best-of); then once
 * with 100 more that the index cannot narrow (50 {@code v=like.%zzzN%}, 50 {@code id=lt.-N},
 * never matching; a note). Every change matches the unfiltered binding and exactly one
 * {@code k=eq} binding. The registry's (table, column, eq-value) index makes a change touch only
 * the bindings of the values its row holds, so changes/s should stay close to the one-binding
 * run. Rates are taken from the first to the last event (the worker's start-up and registry load
 * excluded); a drain counts the worker's own events only and is valid only when every change
 * arrived. Service-role bindings: no RLS query.
 */
final class MatchingBench {
    static final String TABLE = "bench_match";
    private static final int VALUES = 10_000;
    static final Target TARGET = Target.of(Target.atLeast("ratio", "", 0.8, "× the one-binding changes/s"));

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

    void run(int rows, int rounds) throws Exception {
        s.subscribe(TABLE, "service_role", null);
        List<SubscriptionEntry> eq = new ArrayList<>();
        for (int i = 0; i < VALUES; i++) {
            eq.add(entry("k=eq." + i));
        }
        Rounds fig = new Rounds(
                "7. matching, 10,001 bindings (10,000 k=eq.N) vs 1, " + rows / 1000 + "k single-row inserts",
                "changes/s",
                "1 binding");
        java.nio.file.Path jfr = s.runDir.resolve("matching-10k.jfr");
        drain(rows, List.of()); // warm-up: the table's first backlog, not reported
        for (int round = 0; round < rounds; round++) {
            Sample one;
            Sample many;
            List<String> profile = round == rounds - 1 ? s.profiler(jfr) : List.of();
            if (round % 2 == 0) {
                one = drain(rows, List.of());
                put(eq);
                many = drain(rows, profile);
                delete(eq);
            } else {
                put(eq);
                many = drain(rows, profile);
                delete(eq);
                one = drain(rows, List.of());
            }
            fig.add(many, one, round % 2 == 0 ? "1 binding first" : "10,001 bindings first");
        }
        report.row(
                fig,
                null,
                "1 binding, same backlog shape, same rounds: median " + Report.f0(fig.medianBaseline()) + " changes/s",
                TARGET);
        put(eq);
        for (int i = 0; i < 50; i++) {
            put(List.of(entry("v=like.%zzz" + i + "%"), entry("id=lt." + (-i))));
        }
        Sample mixed = drain(rows, List.of());
        report.note(String.format(
                "matching: with 100 more bindings the index cannot narrow (50 like, 50 lt, tested against every"
                        + " change), one run: %s changes/s = %.2f× the one-binding rounds' median (%d/%d changes)",
                Report.f0(mixed.value()), mixed.value() / fig.medianBaseline(), mixed.received(), mixed.expected()));
        if (s.profile) {
            String hot = JfrHotMethods.summarize(jfr, null, 10);
            System.out.println(hot);
            report.evidence("Matching with 10,001 bindings: where the worker's time goes (informational)", hot);
        }
    }

    private SubscriptionEntry entry(String filter) {
        SubscriptionEntry plain = RegistryEntries.binding(
                s.projectId, TABLE, RegistryEntries.claims("service_role", s.projectId), "bench");
        return new SubscriptionEntry(
                plain.subId(),
                plain.projectId(),
                plain.table(),
                plain.event(),
                filter,
                plain.role(),
                plain.claims(),
                plain.expiresAtMs(),
                plain.instance());
    }

    private void put(List<SubscriptionEntry> entries) {
        for (SubscriptionEntry e : entries) {
            s.keep(e.key(), RegistryEntries.put(s.client, e));
        }
    }

    private void delete(List<SubscriptionEntry> entries) throws Exception {
        io.nats.client.KeyValue kv = s.client.keyValue(SubscriptionEntry.BUCKET);
        for (SubscriptionEntry e : entries) {
            s.forget(e.key());
            kv.delete(e.key());
        }
    }

    /** Writes a backlog with the worker stopped, then times a fresh worker draining it. */
    private Sample drain(int rows, List<String> jvmArgs) throws Exception {
        s.stopWorker();
        long from = SlotPosition.walNow(s);
        s.pg.execute("CALL " + s.schema + ".bench_fill_match(" + rows + ")");
        counter.reset(Stack.WORKER_ORIGIN, from);
        ServiceProcess w = s.startWorker(Map.of(), jvmArgs);
        w.waitForLog(CdcThroughputBench.STARTED, Duration.ofSeconds(90));
        boolean complete = counter.await(rows, 30_000, 600_000);
        double seconds = (counter.lastNanos() - counter.firstNanos()) / 1e9;
        double cpu = Procs.cpuSeconds(w.pid());
        if (!complete) {
            report.note("matching: only " + counter.count() + " of " + rows + " changes arrived (" + counter.leftOut()
                    + ")");
        }
        return Sample.of(complete ? (counter.count() - 1) / Math.max(seconds, 1e-3) : Double.NaN)
                .counted(rows, counter.count())
                .cpu(cpu);
    }
}
