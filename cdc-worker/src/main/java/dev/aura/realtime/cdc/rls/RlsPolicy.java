package dev.aura.realtime.cdc.rls;

import dev.aura.realtime.cdc.catalog.CommitVisibility;
import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.identity.ClientRoles;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.rls.RlsRun.Group;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Grants and Row Level Security for postgres_changes (docs/design.md C7, docs/security.md).
 *
 * <ul>
 *   <li>Every subscriber of a client role sees only the columns its role may select
 *       ({@link ViewRules#clientView}); one that cannot select the primary key gets
 *       {@code Error 401: Unauthorized} and no values. {@code service_role} sees every column.
 *   <li>A binding whose filter tests a column its role may not read, or a non-key column of a
 *       DELETE on an RLS table, is withheld ({@link ViewRules#filterReveals}).
 *   <li>Table without RLS: nothing more. RLS on, DELETE/TRUNCATE: the row is gone and cannot be
 *       checked; delivered with {@code old_record} cut to the key (Supabase's rule).
 *   <li>RLS on, INSERT/UPDATE: bindings are grouped by (table, role, claims), one
 *       {@link KeyChecks#visibleKeys} round trip per group for all the run's changes of the table.
 *       A check that raises is re-run per key in one statement ({@link KeyChecks#visibleEach}), so a
 *       row whose policy raises denies that change only.
 *   <li>Slow is late, not lost (docs/design.md C14). In the shared lane (the shards) a project's
 *       first check that times out in a run makes the project late: that check's changes and every
 *       change of the project not yet decided in the run are {@link Decision#LATE} (no further
 *       query), and the pipeline moves them, and the project's later changes, to its late lane. So
 *       one project holds a shard run for at most one statement timeout. In the late lane
 *       ({@code lateLane}) the same checks run with the late lane's longer timeout, and a timed-out
 *       batch is checked again change by change; a change whose check still does not finish alone
 *       reports its subscribers as {@link Decision#timedOut} (an error event, the quarantine).
 *   <li>Fail closed: whatever prevents a check denies the subscribers it concerns, logged with a
 *       code and counted ({@code aura_cdc_rls_errors}); tenant SQL switched off (a privileged or
 *       missing tenant login) denies every check.
 *   <li>Postgres not answering is not a denial but a {@link CdcFailure}: the batch is re-read.
 * </ul>
 *
 * Thread-safe; the shards call it concurrently. All state of one call lives in its {@link RlsRun}.
 */
public final class RlsPolicy implements AccessPolicy {
    private static final Logger log = LoggerFactory.getLogger(RlsPolicy.class);

    private final TenantDb tenant;
    private final KeyChecks checks;
    private final TableSecurity security;
    private final CdcMetrics metrics;
    private final Duration statementTimeout;
    private final boolean lateLane;
    private final long runBudgetNanos;

    /** Below this, a check is not started in the shared lane: its project is late instead. */
    private static final long MIN_CHECK_NANOS = Duration.ofMillis(5).toNanos();

    private final Predicate<String> identityReady;
    private final CommitVisibility visibility;

    /**
     * @param statementTimeout each check's timeout: the tenant statement timeout in the shared lane,
     *     the late lane's check timeout in the late lane
     * @param lateLane whether this policy serves the late lane (timeouts are retried per change and
     *     then reported) rather than the shards (a timeout makes the project late)
     * @param runBudget in the shared lane, the time one project's checks may take in one shard run
     *     ({@code CDC_SHARD_CHECK_BUDGET_MS}): each check's timeout is what is left of it, and a
     *     project whose checks spent it is late (docs/design.md C14); unused in the late lane
     * @param identityReady whether a project's identity is in place (provisioning it if not): its
     *     roles decide column grants and its runners run the checks (docs/design.md I)
     * @param visibility waits, before a run's checks, until the run's transactions are visible to
     *     the checks' snapshots
     */
    public RlsPolicy(
            TenantDb tenant,
            TableSecurity security,
            CdcMetrics metrics,
            Duration statementTimeout,
            boolean lateLane,
            Duration runBudget,
            Predicate<String> identityReady,
            CommitVisibility visibility) {
        this.tenant = tenant;
        this.checks = new KeyChecks(tenant);
        this.security = security;
        this.metrics = metrics;
        this.statementTimeout = statementTimeout;
        this.lateLane = lateLane;
        this.runBudgetNanos = runBudget.toNanos();
        this.identityReady = identityReady;
        this.visibility = visibility;
    }

    @Override
    public List<Decision> decide(List<Candidates> batch) throws CdcFailure {
        RlsRun run = new RlsRun(batch);
        for (int i = 0; i < batch.size(); i++) {
            if (!batch.get(i).matched().isEmpty()) {
                sort(run, i);
            }
        }
        if (!run.groups().isEmpty()) {
            awaitVisible(run);
        }
        for (Group g : run.groups()) {
            checkGroup(run, g);
        }
        return run.decisions(metrics.rlsDenied);
    }

    /**
     * A check reads the row as the subscriber's role now: until its transaction is visible it would
     * find no row, or the version before an UPDATE (docs/design.md C7, "Commit visibility").
     */
    private void awaitVisible(RlsRun run) throws CdcFailure {
        List<Long> xids = new ArrayList<>();
        for (Group g : run.groups()) {
            for (int i : g.subsByChange().keySet()) {
                xids.add(run.batch.get(i).xid());
            }
        }
        try {
            if (!visibility.await(xids)) {
                log.warn(
                        "[{}] a transaction of this run was not visible to new snapshots within the wait; checked anyway",
                        LogCode.COMMIT_NOT_VISIBLE);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw CdcFailure.retriable(CdcReason.ERROR, "interrupted awaiting commit visibility", e);
        }
    }

    /** Decides what needs no query and files the rest into groups. */
    private void sort(RlsRun run, int i) throws CdcFailure {
        Candidates c = run.batch.get(i);
        BuiltEvent e = c.event();
        TableSecurity.Facts facts = facts(e, c.matched().size());
        if (facts == null) {
            return;
        }
        for (SubscriptionEntry s : c.matched()) {
            if (ClientRoles.SERVICE_ROLE.equals(s.role())) {
                run.allow(i, s.subId(), ViewRules.serviceView(facts, e.type()));
                continue;
            }
            String pgRole = ClientRoles.of(s.role());
            if (pgRole == null) {
                deny(
                        LogCode.RLS_UNKNOWN_ROLE,
                        "subscription " + s.subId() + " has a role that is not a client role",
                        1);
                continue;
            }
            if (!facts.exists()) {
                deny(LogCode.RLS_STATE_UNAVAILABLE, e.schemaName() + "." + e.table() + " no longer exists", 1);
                continue;
            }
            if (ViewRules.filterReveals(s.filter(), facts, pgRole, e.type())) {
                metrics.rlsWithheld.increment();
                log.debug(
                        "withheld {} from {}: its filter would reveal a value {} may not read",
                        e.eventId(),
                        s.subId(),
                        pgRole);
                continue;
            }
            View view = ViewRules.clientView(facts, pgRole, e.type());
            if (!facts.rowSecurity() || !ViewRules.rowChange(e.type()) || view.equals(ViewRules.UNAUTHORIZED_VIEW)) {
                run.allow(i, s.subId(), view);
            } else if (tenant.status().off()) {
                deny(
                        LogCode.RLS_CHECK_FAILED,
                        e.schemaName() + "." + e.table() + ": tenant SQL is off ("
                                + tenant.status().reasonCode() + ")",
                        1);
            } else if (facts.pkColumns().isEmpty()) {
                deny(
                        LogCode.RLS_NO_PRIMARY_KEY,
                        e.schemaName() + "." + e.table() + " has RLS on but no primary key; changes cannot be checked",
                        1);
            } else {
                run.file(i, e, s, pgRole, facts, view);
            }
        }
    }

    /** The table's security facts, or null (everyone denied) when the catalog cannot be read. */
    private TableSecurity.Facts facts(BuiltEvent e, int subscriptions) throws CdcFailure {
        if (!identityReady.test(e.projectId())) {
            deny(
                    LogCode.RLS_STATE_UNAVAILABLE,
                    "project " + e.projectId() + " has no database identity yet (see [RealtimeSchemaFailed])",
                    subscriptions);
            return null;
        }
        try {
            return security.facts(e.projectId(), e.schemaName(), e.table());
        } catch (SQLException ex) {
            if (CdcFailure.isConnectionFailure(ex)) {
                throw CdcFailure.retriable(
                        CdcReason.POSTGRES_UNAVAILABLE,
                        "RLS state of " + e.schemaName() + "." + e.table() + ": " + ex.getMessage(),
                        ex);
            }
            deny(
                    LogCode.RLS_STATE_UNAVAILABLE,
                    "cannot read RLS state of " + e.schemaName() + "." + e.table() + " (" + ex.getMessage() + ")",
                    subscriptions);
            return null;
        }
    }

    /**
     * Checks one group's changes: batched, then per key after an error; after a timeout the
     * changes are late (shared lane) or checked one by one (late lane).
     */
    private void checkGroup(RlsRun run, Group g) throws CdcFailure {
        Map<String, List<Integer>> changesByKey = run.changesByKey(g);
        List<String> keys = new ArrayList<>(changesByKey.keySet());
        if (keys.isEmpty()) {
            return;
        }
        if (!lateLane
                && !run.lateProjects.contains(g.projectId())
                && run.budgetLeft(g.projectId(), runBudgetNanos) < MIN_CHECK_NANOS) {
            // its checks took the project's time in this run: it is slow, whatever each one took (C14)
            log.info(
                    "project {}: its RLS checks took {} ms of a shard run; its changes go to its late lane",
                    g.projectId(),
                    run.usedNanos(g.projectId()) / 1_000_000);
            run.lateProjects.add(g.projectId());
        }
        if (run.lateProjects.contains(g.projectId())) {
            run.late(changesByKey.values());
            return;
        }
        KeyChecks.Verdict verdict = query(run, g, keys, false);
        if (verdict instanceof KeyChecks.Verdict.Failed failed
                && failed.failure().kind() == TenantDb.Kind.ERROR
                && keys.size() > 1) {
            log.warn(
                    "[{}] {}: SQLState {}; checking each of {} rows on its own",
                    LogCode.RLS_CHECK_FAILED,
                    g.describe(),
                    failed.failure().sqlState(),
                    keys.size());
            verdict = query(run, g, keys, true);
        }
        switch (verdict) {
            case KeyChecks.Verdict.Visible v -> {
                v.keys().forEach(k -> run.allowKey(g, changesByKey.get(k)));
                if (!v.failedKeys().isEmpty()) {
                    deny(
                            LogCode.RLS_CHECK_FAILED,
                            g.describe() + ": the policy raised for "
                                    + v.failedKeys().size() + " of " + keys.size() + " rows (SQLState "
                                    + v.failedKeys().values().iterator().next() + ")",
                            g.subscriptions(v.failedKeys().keySet(), changesByKey));
                }
            }
            case KeyChecks.Verdict.Failed f
            when f.failure().kind() == TenantDb.Kind.ERROR -> fail(g, f.failure(), g.subscriptions(keys, changesByKey));
            case KeyChecks.Verdict.Failed f
            when !lateLane -> {
                // slow is late, not lost (C14): the project leaves the shared lane for this run
                log.info(
                        "project {}: an RLS check on {} outlived what its budget left (SQLState {}); its changes go to"
                                + " its late lane",
                        g.projectId(),
                        g.describe(),
                        f.failure().sqlState());
                run.lateProjects.add(g.projectId());
                run.late(changesByKey.values());
            }
            case KeyChecks.Verdict.Failed f when keys.size() == 1 -> timedOut(run, g, changesByKey.get(keys.get(0)));
            case KeyChecks.Verdict.Failed f -> {
                log.info(
                        "project {}: an RLS check of {} rows on {} outlived {} ms in the late lane; checking each on its own",
                        g.projectId(),
                        keys.size(),
                        g.describe(),
                        statementTimeout.toMillis());
                for (String key : keys) {
                    switch (query(run, g, List.of(key), false)) {
                        case KeyChecks.Verdict.Visible v -> v.keys().forEach(k -> run.allowKey(g, changesByKey.get(k)));
                        case KeyChecks.Verdict.Failed one
                        when one.failure().kind() == TenantDb.Kind.ERROR ->
                            fail(g, one.failure(), g.subscriptions(List.of(key), changesByKey));
                        case KeyChecks.Verdict.Failed one -> timedOut(run, g, changesByKey.get(key));
                    }
                }
            }
        }
    }

    /** The group's subscribers of these changes could not be checked even alone (late lane). */
    private void timedOut(RlsRun run, Group g, List<Integer> changes) {
        metrics.rlsTimeouts.increment();
        run.timedOut(g, changes);
    }

    /**
     * One tenant statement for {@code keys}: with the late lane's timeout there, in the shared lane
     * with what is left of the project's budget of the run (at most the statement timeout).
     */
    private KeyChecks.Verdict query(RlsRun run, Group g, List<String> keys, boolean each) throws CdcFailure {
        metrics.rlsQueries.increment();
        Duration timeout = lateLane
                ? statementTimeout
                : Duration.ofNanos(Math.max(
                        MIN_CHECK_NANOS,
                        Math.min(statementTimeout.toNanos(), run.budgetLeft(g.projectId(), runBudgetNanos))));
        long started = System.nanoTime();
        KeyChecks.Verdict v;
        try {
            v = each
                    ? checks.visibleEach(
                            new ProjectIdentity(g.projectId()), g.pgRole(), g.claims(), g.table(), keys, timeout)
                    : checks.visibleKeys(
                            new ProjectIdentity(g.projectId()), g.pgRole(), g.claims(), g.table(), keys, timeout);
        } catch (TenantDb.Unavailable e) {
            // no tenant text in here: the message is the driver's or the pool's
            throw CdcFailure.retriable(
                    CdcReason.POSTGRES_UNAVAILABLE, "RLS check on " + g.describe() + ": " + e.getMessage(), e);
        }
        run.used(g.projectId(), System.nanoTime() - started);
        if (v instanceof KeyChecks.Verdict.Failed f && f.failure().kind() == TenantDb.Kind.TIMEOUT) {
            metrics.rlsTimeouts.increment();
        }
        return v;
    }

    private void fail(Group g, TenantDb.Failure failure, int subscriptions) {
        LogCode code = failure.kind() == TenantDb.Kind.TIMEOUT ? LogCode.RLS_CHECK_TIMED_OUT : LogCode.RLS_CHECK_FAILED;
        // the tenant's error text is not logged: logs reach operators' dashboards (issue 36, C13)
        deny(code, g.describe() + ": SQLState " + failure.sqlState(), subscriptions);
    }

    /**
     * The one way subscribers are denied for a reason other than their policy: logged with the
     * code, counted in {@code aura_cdc_rls_errors}.
     */
    private void deny(LogCode code, String detail, int subscriptions) {
        metrics.rlsErrors.increment();
        log.warn("[{}] {}; denied for {} subscription(s)", code, detail, subscriptions);
    }
}
