package dev.aura.realtime.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.testkit.RegistryEntries;
import dev.aura.realtime.testkit.ServiceProcess;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Figure 5 (issue 5's benchmark, reworked by issue 25): one table with RLS ({@code owner =
 * auth.uid()}), 1,000 registry bindings with 10 distinct claim sets (100 authenticated users'
 * bindings per claim set), a backlog of single-row inserts (owner cycling through the 10 users, so
 * each row is visible to 100 bindings).
 *
 * <p><b>Ours</b>: the worker drains the backlog (batched RLS: one query per distinct claims per
 * table per shard batch), decoding, matching and publishing included; events/s is the backlog over
 * the time from the worker's start to the last event at the NATS subscriber.
 *
 * <p><b>Reference</b>: the reference server's method (supabase/walrus {@code realtime.apply_rls},
 * as supabase/realtime runs it), written here: one SQL call per change that, for each distinct
 * (role, claims) group among the table's subscriptions, sets the role and
 * {@code request.jwt.claims} locally, selects the row by its primary key under RLS and collects the
 * group's subscription ids when it is visible; it returns the ids allowed ({@link RlsReferenceSql#REFERENCE_SQL}).
 * The benchmark calls it once per change of a fresh backlog of the same shape, in commit order,
 * over one connection with one prepared statement (autocommit: one round trip per change). It is
 * kept fair and efficient, in the baseline's favour: the groups are precomputed (walrus aggregates
 * the table's subscriptions at every change and checks every subscription, here each of the 10
 * groups once), the visibility query is static plpgsql (its plan cached; walrus re-prepares one
 * per change), and the benchmark hands it the primary key instead of the WAL record (no slot
 * read, no decoding, no record building, no publishing).
 *
 * <p>{@link #run} alternates rounds (ours, reference, ours, reference, ...) and reports the medians
 * and every round; {@link #measureOurs} and {@link #measureReference} measure one round each.
 */
final class RlsBench {
    static final String TABLE = "bench_rls";
    static final String GROUPS = "bench_ref_claims_groups";
    static final String REFERENCE_FUNCTION = "bench_ref_apply_rls";
    /**
     * Issue 25's target: batched RLS at least 5× the reference method's events/s and at least 10×
     * fewer round trips per change (issue 5), both on the median of alternating rounds.
     */
    static final Target TARGET = Target.of(
            Target.atLeast("ratio", "", 5, "× the reference's events/s"),
            Target.atLeast("fewer round trips", "", 10, "× fewer round trips"));

    /** One round of ours: the worker drained {@code rows} inserts. */
    record OursResult(
            long rows,
            long received,
            double seconds,
            double rlsQueries,
            long deliveries,
            boolean complete,
            long firstIdReceived,
            long firstId,
            double cpuSeconds) {
        /** NaN unless every change arrived (issue 39: a stalled drain is not credited). */
        double eventsPerSecond() {
            return complete ? received / seconds : Double.NaN;
        }

        double roundTripsPerChange() {
            return rlsQueries / rows;
        }
    }

    /** One round of the reference: {@code changes} of the backlog checked, one call each. */
    record ReferenceResult(long rows, long changes, long calls, long allowed, double seconds) {
        double eventsPerSecond() {
            return changes / seconds;
        }

        double roundTripsPerChange() {
            return changes == 0 ? Double.NaN : (double) calls / changes;
        }

        boolean complete() {
            return changes == rows;
        }
    }

    private final Stack s;
    private final ChangeCounter counter;
    private final Report report;
    private final List<String> users = new ArrayList<>();
    private final AtomicLong allowedIds = new AtomicLong();
    private final AtomicLong minId = new AtomicLong(Long.MAX_VALUE);
    private int bindings;

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
                        + "END LOOP; END $$",
                // the reference method's subscriptions, grouped by (role, claims) once (not per change)
                "CREATE TABLE " + s.table(GROUPS) + " (entity regclass NOT NULL, claims_role text NOT NULL,"
                        + " claims jsonb NOT NULL, sub_ids uuid[] NOT NULL)",
                "CREATE INDEX ON " + s.table(GROUPS) + " (entity)",
                String.format(RlsReferenceSql.REFERENCE_SQL, s.schema, TABLE),
                "CREATE TABLE " + s.table("bench_ref_subscriptions") + " (subscription_id uuid PRIMARY KEY,"
                        + " entity regclass NOT NULL, claims_role text NOT NULL, claims jsonb NOT NULL)",
                "CREATE INDEX ON " + s.table("bench_ref_subscriptions") + " (entity)",
                String.format(RlsReferenceSql.REFERENCE_EACH_SQL, s.schema, TABLE));
    }

    /**
     * Needs a running worker: registers the bindings (and the reference's copy of them) and waits
     * until a probe reaches 1/10 of them.
     */
    void subscribe(int bindings) throws Exception {
        this.bindings = bindings;
        Map<String, List<String>> groups = new LinkedHashMap<>();
        for (int i = 0; i < bindings; i++) {
            String user = users.get(i % users.size());
            String subId = s.subscribe(TABLE, "authenticated", user);
            groups.computeIfAbsent(claims(user), k -> new ArrayList<>()).add(subId);
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
            counter.reset(Stack.WORKER_ORIGIN);
            allowedIds.set(0);
            s.pg.execute("INSERT INTO " + s.table(TABLE) + "(owner, v) VALUES ('" + users.get(0) + "', -1)");
            counter.await(1, 2000, 2000);
            if (counter.count() == 1 && allowedIds.get() == expect) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "RLS probe: worker allowed " + allowedIds.get() + " bindings, expected " + expect);
            }
            Procs.sleep(300);
        }
        // the role the worker's checks run as: the project's own (issue 22, provisioned by now), or
        // the shared client role when the bench drives an older worker (AURA_BENCH_CDC_JAR)
        String role = s.pg.queryOne("SELECT coalesce((SELECT rolname::text FROM pg_roles WHERE rolname = '" + s.schema
                + "_authenticated'), 'aura_authenticated')");
        s.pg.execute("DELETE FROM " + s.table(GROUPS));
        try (Connection c = s.pg.connect();
                PreparedStatement ps = c.prepareStatement("INSERT INTO " + s.table(GROUPS)
                        + "(entity, claims_role, claims, sub_ids) VALUES (?::regclass, ?, ?::jsonb, ?::uuid[])")) {
            for (var g : groups.entrySet()) {
                ps.setString(1, s.table(TABLE));
                ps.setString(2, role);
                ps.setString(3, g.getKey());
                ps.setArray(4, c.createArrayOf("uuid", g.getValue().toArray()));
                ps.executeUpdate();
            }
        }
        s.pg.execute("DELETE FROM " + s.table("bench_ref_subscriptions"));
        s.pg.execute("INSERT INTO " + s.table("bench_ref_subscriptions")
                + " SELECT u, entity, claims_role, claims FROM " + s.table(GROUPS) + ", unnest(sub_ids) u");
    }

    /** The claims of a binding of {@code user}, as {@link Stack#subscribe} registers them. */
    private String claims(String user) {
        ObjectNode claims = RegistryEntries.claims("authenticated", s.projectId);
        return claims.put("sub", user).put("aud", "authenticated").toString();
    }

    /**
     * Alternates {@code rounds} rounds of ours and of the reference on backlogs of {@code rows}
     * inserts each, reports the medians (one row) and every round (a note), and the batched
     * worker's profile of the last round. Leaves the worker stopped.
     */
    void run(int rows, int rounds) throws Exception {
        List<OursResult> ours = new ArrayList<>();
        List<ReferenceResult> ref = new ArrayList<>();
        Path jfr = s.runDir.resolve("rls-batched.jfr");
        for (int r = 1; r <= rounds; r++) {
            // alternating: ours first in odd rounds, the reference first in even ones
            if (r % 2 == 0) {
                ref.add(measureReference(rows, Duration.ofSeconds(120)));
            }
            ours.add(measureOurs(rows, r == rounds && s.profile ? jfr : null));
            if (r % 2 == 1) {
                ref.add(measureReference(rows, Duration.ofSeconds(120)));
            }
            System.out.printf(
                    "  RLS round %d: ours %.0f events/s, reference %.0f events/s%n",
                    r, ours.getLast().eventsPerSecond(), ref.getLast().eventsPerSecond());
        }
        double oursRate = report(rows, ours, ref).median();
        ReferenceResult each = measureReferenceEach(rows, Duration.ofSeconds(10));
        report.info(
                "5b. RLS batched vs walrus's per-subscription loop (informational, one time-boxed run), same data",
                Report.f0(oursRate) + " events/s (median of figure 5's valid rounds)",
                String.format(
                        "walrus's loop: %.0f events/s (%d of %d changes in %.1f s, 1 call/change, %d checks inside each)",
                        each.eventsPerSecond(), each.changes(), each.rows(), each.seconds(), bindings),
                String.format("%.1f× events/s", oursRate / (each.changes() / each.seconds())),
                "– (no target)");
        // the reference rounds' backlogs were never read by a worker: the next figure starts past them
        s.pg.execute("SELECT pg_replication_slot_advance('" + s.slot + "', pg_current_wal_lsn())");
        if (s.profile) {
            report.evidence(
                    "RLS: where the time goes (informational)",
                    "Batched (last round):\n\n" + JfrHotMethods.summarize(jfr, "aura-shard", 6));
        }
    }

    /**
     * Figure 5 on its rounds: ours (every change delivered to the 100 bindings allowed to see it,
     * counted from the worker only) against the reference (every change checked), alternating.
     */
    Rounds report(int rows, List<OursResult> ours, List<ReferenceResult> ref) {
        Rounds fig = new Rounds(
                "5. RLS batched vs the reference method (walrus's shape, one check per claims group), " + bindings
                        + " bindings / 10 claims, " + rows / 1000 + "k inserts",
                "events/s",
                "reference method");
        long perChange = bindings / users.size();
        for (int i = 0; i < ours.size(); i++) {
            OursResult o = ours.get(i);
            ReferenceResult f = ref.get(i);
            fig.add(
                            Sample.of(o.eventsPerSecond())
                                    .counted(o.rows(), o.received())
                                    .cpu(o.cpuSeconds())
                                    .invalidIf(
                                            o.complete() && o.deliveries() != o.rows() * perChange,
                                            o.deliveries() + " deliveries allowed, expected " + o.rows() * perChange),
                            Sample.of(f.eventsPerSecond()).counted(f.rows(), f.changes()),
                            String.format(
                                    "ours %.0f RLS queries in %.2f s, %,d deliveries%s; reference %d calls in %.2f s,"
                                            + " %,d ids allowed",
                                    o.rlsQueries(),
                                    o.seconds(),
                                    o.deliveries(),
                                    o.complete()
                                            ? ""
                                            : String.format(
                                                    " (the first id received %d, the backlog started at %d)",
                                                    o.firstIdReceived(), o.firstId()),
                                    f.calls(),
                                    f.seconds(),
                                    f.allowed()))
                    .metric("round trips/change", o.roundTripsPerChange())
                    .metric("fewer round trips", f.roundTripsPerChange() / o.roundTripsPerChange());
        }
        report.row(
                fig,
                String.format("%.3f RLS round trips/change (median)", fig.medianMetric("round trips/change")),
                String.format(
                        "reference: median %s events/s, 1 round trip/change (10 claims groups checked inside it);"
                                + " median %.0f× fewer round trips",
                        Report.f0(fig.medianBaseline()), fig.medianMetric("fewer round trips")),
                TARGET);
        return fig;
    }

    /**
     * One round of ours: with the worker stopped, a backlog of {@code rows} inserts; then the
     * worker starts (with a JFR recording to {@code jfr} when not null) and drains it. Leaves the
     * worker stopped.
     */
    OursResult measureOurs(int rows, Path jfr) throws Exception {
        s.stopWorker();
        // the slot skips what an earlier round left unread (the reference's backlog): ours drains its own only
        s.pg.execute("SELECT pg_replication_slot_advance('" + s.slot + "', pg_current_wal_lsn())");
        long firstId = nextId();
        long from = SlotPosition.walNow(s);
        s.pg.execute("CALL " + s.schema + ".bench_fill_rls(" + rows + ", " + ownersArray() + ")");
        counter.reset(Stack.WORKER_ORIGIN, from);
        allowedIds.set(0);
        minId.set(Long.MAX_VALUE);
        ServiceProcess w = s.startWorker(Map.of(), jfr == null ? List.of() : Stack.jfr(jfr));
        long ready = CdcThroughputBench.logTime(w.waitForLog(CdcThroughputBench.STARTED, Duration.ofSeconds(90)));
        long offset = System.currentTimeMillis() * 1_000_000 - System.nanoTime();
        boolean complete = counter.await(rows, 8_000, 300_000);
        long last = (counter.lastNanos() + offset) / 1_000_000;
        double seconds = (last - ready) / 1000.0;
        double queries = s.workerMetric("aura_cdc_rls_queries_total");
        long deliveries = allowedIds.get();
        double cpu = Procs.cpuSeconds(w.pid());
        s.stopWorker();
        return new OursResult(rows, counter.count(), seconds, queries, deliveries, complete, minId.get(), firstId, cpu);
    }

    /**
     * One round of the reference: a fresh backlog of {@code rows} inserts (the worker's state does
     * not matter: nothing here reads the slot), then {@value #REFERENCE_FUNCTION} called once per
     * change in commit order on one connection with one prepared statement, until the backlog is
     * done or {@code timeBox} is up.
     */
    ReferenceResult measureReference(int rows, Duration timeBox) throws Exception {
        return measureReference(rows, timeBox, REFERENCE_FUNCTION);
    }

    /** walrus's per-subscription loop ({@link RlsReferenceSql#REFERENCE_EACH_SQL}), otherwise as {@link #measureReference}. */
    ReferenceResult measureReferenceEach(int rows, Duration timeBox) throws Exception {
        return measureReference(rows, timeBox, "bench_ref_apply_rls_each");
    }

    private ReferenceResult measureReference(int rows, Duration timeBox, String function) throws Exception {
        long firstId = nextId();
        s.pg.execute("CALL " + s.schema + ".bench_fill_rls(" + rows + ", " + ownersArray() + ")");
        long calls = 0;
        long allowed = 0;
        try (Connection c = s.pg.connect()) {
            List<Long> ids = backlogIds(c, firstId);
            c.setAutoCommit(true);
            try (PreparedStatement ps = c.prepareStatement("SELECT " + s.schema + "." + function + "(?)::text")) {
                long t0 = System.nanoTime();
                long deadline = t0 + timeBox.toNanos();
                for (long id : ids) {
                    if (System.nanoTime() > deadline) {
                        break;
                    }
                    ps.setLong(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        allowed += countIds(rs.getString(1));
                    }
                    calls++;
                }
                return new ReferenceResult(ids.size(), calls, calls, allowed, (System.nanoTime() - t0) / 1e9);
            }
        }
    }

    /** Elements of a uuid[]'s text form ({@code {a,b,...}}). */
    private static long countIds(String array) {
        if (array == null || array.length() <= 2) {
            return 0;
        }
        long n = 1;
        for (int i = 0; i < array.length(); i++) {
            n += array.charAt(i) == ',' ? 1 : 0;
        }
        return n;
    }

    private List<Long> backlogIds(Connection c, long firstId) throws SQLException {
        List<Long> ids = new ArrayList<>();
        try (PreparedStatement ps =
                c.prepareStatement("SELECT id FROM " + s.table(TABLE) + " WHERE id >= ? ORDER BY id")) {
            ps.setLong(1, firstId);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    ids.add(rs.getLong(1));
                }
            }
        }
        return ids;
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
