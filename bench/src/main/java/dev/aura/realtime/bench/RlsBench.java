package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.ServiceProcess;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Pattern;

/**
 * Figure 5 (issue 5's benchmark): one table with RLS ({@code owner = auth.uid()}), 1,000 registry
 * bindings with 10 distinct claim sets (100 authenticated users' bindings per claim set), a
 * backlog of single-row inserts (owner cycling through the 10 users, so each row is visible to 100
 * bindings). The worker runs it with {@code CDC_RLS_MODE=batched} (the product), then with
 * {@code naive} (one query per (change, binding)) on a fresh backlog, same run.
 *
 * <p>Naive mode publishes a change only after its whole shard run (up to 256 changes × 1,000
 * queries) is checked, so within a time box it may publish nothing: its rate is counted from the
 * worker's {@code aura_cdc_rls_queries_total} (1,000 queries per change), and the events it did
 * publish are reported next to it.
 */
final class RlsBench {
    static final String TABLE = "bench_rls";
    private static final Pattern STARTED = Pattern.compile("cdc-worker .* started");

    private final Stack s;
    private final ChangeCounter counter;
    private final Report report;
    private final List<String> users = new ArrayList<>();
    private final AtomicLong allowedIds = new AtomicLong();
    private final AtomicLong minId = new AtomicLong(Long.MAX_VALUE);

    RlsBench(Stack s, ChangeCounter counter, Report report) {
        this.s = s;
        this.counter = counter;
        this.report = report;
        for (int i = 0; i < 10; i++) {
            users.add(UUID.randomUUID().toString());
        }
    }

    static void createTable(Stack s) {
        s.pg.execute(
                "CREATE TABLE " + s.table(TABLE) + " (id bigserial PRIMARY KEY, owner uuid NOT NULL, v int NOT NULL)",
                "GRANT SELECT ON " + s.table(TABLE) + " TO aura_anon, aura_authenticated",
                "ALTER TABLE " + s.table(TABLE) + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY own ON " + s.table(TABLE)
                        + " FOR SELECT TO aura_authenticated USING (owner = auth.uid())",
                "CREATE PROCEDURE " + s.schema
                        + ".bench_fill_rls(n int, owners uuid[]) LANGUAGE plpgsql AS $$ BEGIN FOR i IN 1..n LOOP "
                        + "INSERT INTO " + s.table(TABLE)
                        + "(owner, v) VALUES (owners[1 + i % array_length(owners, 1)], i); COMMIT; "
                        + "END LOOP; END $$");
    }

    /** Needs a running worker: registers the bindings and waits until a probe reaches 100 of them. */
    void subscribe(int bindings) throws Exception {
        for (int i = 0; i < bindings; i++) {
            s.subscribe(TABLE, "authenticated", users.get(i % users.size()));
        }
        counter.hook(m -> {
            try {
                JsonNode event = Stack.JSON.readTree(m.getData());
                allowedIds.addAndGet(event.path("allowed_sub_ids").size());
                long id = event.path("data").path("record").path("id").asLong(Long.MAX_VALUE);
                minId.accumulateAndGet(id, Math::min);
            } catch (Exception e) {
                // counted as zero
            }
        });
        long expect = bindings / users.size();
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (true) {
            counter.reset();
            allowedIds.set(0);
            s.pg.execute("INSERT INTO " + s.table(TABLE) + "(owner, v) VALUES ('" + users.get(0) + "', -1)");
            counter.await(1, 2000, 2000);
            if (counter.count() == 1 && allowedIds.get() == expect) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "RLS probe: worker allowed " + allowedIds.get() + " bindings, expected " + expect);
            }
            Procs.sleep(300);
        }
    }

    void run(int rows, int naiveSeconds) throws Exception {
        int bindings = 1000;
        // batched
        s.stopWorker();
        long firstId = nextId();
        s.pg.execute("CALL " + s.schema + ".bench_fill_rls(" + rows + ", " + ownersArray() + ")");
        counter.reset();
        allowedIds.set(0);
        minId.set(Long.MAX_VALUE);
        Path jfrBatched = s.runDir.resolve("rls-batched.jfr");
        ServiceProcess w = s.startWorker(Map.of("CDC_RLS_MODE", "batched"), Stack.jfr(jfrBatched));
        long ready = CdcThroughputBench.logTime(w.waitForLog(STARTED, Duration.ofSeconds(90)));
        long offset = System.currentTimeMillis() * 1_000_000 - System.nanoTime();
        boolean complete = counter.await(rows, 8_000, 300_000);
        long last = (counter.lastNanos() + offset) / 1_000_000;
        double batchedSecs = (last - ready) / 1000.0;
        double batchedQueries = s.workerMetric("aura_cdc_rls_queries_total");
        long batchedDeliveries = allowedIds.get();
        s.stopWorker();
        double batchedRate = counter.count() / batchedSecs;
        if (!complete) {
            report.note(String.format(
                    "RLS batched: %d of %d inserts never reached NATS; the first id received was %d, the backlog "
                            + "started at id %d: the changes processed before the worker's registry watch finished loading were dropped as "
                            + "unmatched (product bug, see the analysis)",
                    rows - counter.count(), rows, minId.get(), firstId));
        }

        // naive, on a fresh backlog of the same shape
        s.pg.execute("CALL " + s.schema + ".bench_fill_rls(" + rows + ", " + ownersArray() + ")");
        counter.reset();
        Path jfrNaive = s.runDir.resolve("rls-naive.jfr");
        w = s.startWorker(Map.of("CDC_RLS_MODE", "naive"), Stack.jfr(jfrNaive));
        w.waitForLog(STARTED, Duration.ofSeconds(90));
        double q0 = s.workerMetric("aura_cdc_rls_queries_total");
        long t0 = System.nanoTime();
        Procs.sleep(naiveSeconds * 1000L);
        double q1 = s.workerMetric("aura_cdc_rls_queries_total");
        double naiveSecs = (System.nanoTime() - t0) / 1e9;
        long naivePublished = counter.count();
        s.stopWorker();
        double naiveQps = (q1 - q0) / naiveSecs;
        double naiveRate = naiveQps / bindings;

        double batchedPerChange = batchedQueries / rows;
        double naivePerChange = bindings; // by construction; cross-checked by the query rate
        double rtRatio = naivePerChange / batchedPerChange;
        double rateRatio = batchedRate / naiveRate;
        report.row(
                "5. RLS batched vs naive, " + bindings + " bindings / 10 claims, " + rows / 1000 + "k inserts",
                Report.f0(batchedRate) + " events/s, " + Report.f0(batchedQueries) + " RLS queries ("
                        + String.format("%.3f", batchedPerChange) + "/change), " + batchedDeliveries
                        + " (change, binding) deliveries" + (complete ? "" : ", INCOMPLETE"),
                String.format(
                        "naive: %.1f events/s (%,.0f queries/s ÷ 1,000 per change; %d events published in %.0f s)",
                        naiveRate, naiveQps, naivePublished, naiveSecs),
                Report.f0(rtRatio) + "× fewer round trips, " + Report.f0(rateRatio) + "× events/s",
                "≥ 10× fewer round trips, ≥ 5× events/s",
                rtRatio >= 10 && rateRatio >= 5 && complete);
        report.evidence(
                "RLS: where the time goes (informational)",
                "Batched:\n\n" + JfrHotMethods.summarize(jfrBatched, "aura-shard", 6) + "\nNaive:\n\n"
                        + JfrHotMethods.summarize(jfrNaive, "aura-shard", 6));
    }

    private long nextId() throws Exception {
        try (var c = s.pg.connect();
                var st = c.createStatement();
                var rs = st.executeQuery("SELECT coalesce(max(id), 0) + 1 FROM " + s.table(TABLE))) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private String ownersArray() {
        StringBuilder sb = new StringBuilder("ARRAY[");
        for (int i = 0; i < users.size(); i++) {
            sb.append(i == 0 ? "" : ",").append('\'').append(users.get(i)).append('\'');
        }
        return sb.append("]::uuid[]").toString();
    }
}
