package dev.aura.realtime.cdc.join;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers ws-front's join-time question "is this postgres_changes binding valid?" on
 * {@link Subjects#SUBSCRIPTION_CHECK} (queue group {@code aura-cdc-worker}: any replica,
 * leader or not, answers). Valid means: the project exists, the role is a client role or
 * {@code service_role}, the table is enabled for realtime (unless {@code *}), the filter parses,
 * names an existing column the role may select, tests only a primary-key column when the binding
 * is for DELETE on a table with row level security (a deleted row cannot be checked, so any other
 * filter would reveal values), and each value casts to that column's type in Postgres. So an
 * invalid filter fails at join, not at delivery. A {@code *} binding with a non-key filter on such a
 * table is valid, but its reply carries a notice: it gets no DELETE (docs/security.md).
 *
 * <p>The rules are {@link BindingRules}: project, table, column and grant lookups on platform SQL
 * ({@link ProjectCatalog}, {@link TableSecurity}); this class adds the NATS plumbing, admission
 * and the casts of filter values, which evaluate the tenant's type and run as tenant SQL under the
 * project's role ({@link JoinCasts}).
 *
 * <p><b>Join storms</b> (docs/design.md C7). Checks wait in a {@link FairQueue} per project and
 * are answered in batches of one project: one catalog-version statement for the batch
 * ({@link ProjectCatalog#versions}), the rules' answers reused from a {@link JudgedCache} while
 * the version holds (identical checks of a batch are judged once), and all the batch's casts in one
 * tenant transaction. A project's flood queues behind itself; the other projects' checks take the
 * next turns.
 */
public final class SubscriptionCheckService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionCheckService.class);
    static final String QUEUE = "aura-cdc-worker";
    /** How long a check may wait for its turn; ws-front gives up after SUBSCRIPTION_CHECK_TIMEOUT_MS (2 s). */
    static final Duration MAX_WAIT = Duration.ofSeconds(1);
    /** Checks of one project answered together. */
    static final int MAX_BATCH = 256;
    /** Checks of one project waiting at once on this replica; more are told to try again. */
    static final int MAX_PENDING_PER_PROJECT = 4_096;
    /** Request bytes of all projects waiting at once on this replica. */
    static final long MAX_PENDING_BYTES = 16L * 1024 * 1024;
    /** Bytes of the rules' cached answers. */
    static final long CACHE_BYTES = 16L * 1024 * 1024;

    static final String BUSY = "DatabaseUnavailable: too many subscription checks at once, try again";
    static final String DB_FAILED = "DatabaseUnavailable: could not validate the subscription, try again";

    private record Pending(SubscriptionCheck.Request request, String replyTo, int bytes) {}

    private final Connection nats;
    private final ProjectCatalog projects;
    private final BindingRules rules;
    private final TenantDb tenant;
    private final JoinCasts casts;
    private final JudgedCache cache = new JudgedCache(CACHE_BYTES);
    private final ObjectMapper mapper = WireJson.mapper();
    private final FairQueue<Pending> queue;
    private final CdcMetrics metrics;
    private Dispatcher dispatcher;

    /**
     * @param workers batches answered at once (each holds at most one platform connection), so a
     *     flood of joins cannot take the platform pool the shards also read the catalog on
     * @param identityReady whether a project's database identity is in place, provisioning it if not
     */
    public SubscriptionCheckService(
            Connection nats,
            ProjectCatalog projects,
            TableSecurity security,
            TenantDb tenant,
            int workers,
            Predicate<String> identityReady,
            CdcMetrics metrics) {
        this.metrics = metrics;
        this.nats = nats;
        this.projects = projects;
        this.rules = new BindingRules(BindingRules.Catalog.of(projects, security, identityReady));
        this.tenant = tenant;
        this.casts = new JoinCasts(tenant);
        this.queue = new FairQueue<>(
                "aura-subscription-check",
                new FairQueue.Limits(
                        workers,
                        Math.max(1, workers / 2),
                        MAX_BATCH,
                        MAX_PENDING_PER_PROJECT,
                        MAX_PENDING_BYTES,
                        MAX_WAIT),
                Pending::bytes,
                this::answerBatch);
    }

    public void start() {
        dispatcher = nats.createDispatcher(msg -> {
            SubscriptionCheck.Request req;
            try {
                req = mapper.readValue(msg.getData(), SubscriptionCheck.Request.class);
            } catch (IOException e) {
                reply(msg.getReplyTo(), fail("MalformedMessage: subscription check request is not valid JSON"));
                return;
            }
            Pending p = new Pending(req, msg.getReplyTo(), msg.getData().length);
            if (!queue.offer(String.valueOf(req.projectId()), p)) {
                metrics.joinChecksBusy.increment();
                reply(p.replyTo(), fail(BUSY));
            }
        });
        dispatcher.subscribe(Subjects.SUBSCRIPTION_CHECK, QUEUE);
    }

    private List<Pending> answerBatch(String project, List<Pending> batch, List<Pending> expired) {
        metrics.joinChecksBusy.increment(expired.size());
        expired.forEach(p -> reply(p.replyTo(), fail(BUSY)));
        Map<JudgedCache.Key, List<Pending>> byKey = new LinkedHashMap<>();
        for (Pending p : batch) {
            byKey.computeIfAbsent(JudgedCache.Key.of(p.request()), k -> new ArrayList<>())
                    .add(p);
        }
        Map<JudgedCache.Key, SubscriptionCheck.Reply> replies;
        try {
            replies = judge(project, byKey);
        } catch (SQLException | TenantDb.Unavailable e) {
            log.warn(
                    "[SubscriptionCheckDbFailed] subscription checks of project {} failed on the database: {}",
                    project,
                    e.getMessage());
            replies = Map.of();
        } catch (RuntimeException e) {
            // e.g. tenant SQL switched off between the status check and the cast
            log.warn("[SubscriptionCheckDbFailed] subscription checks of project {} failed: {}", project, e.toString());
            replies = Map.of();
        }
        for (Map.Entry<JudgedCache.Key, List<Pending>> e : byKey.entrySet()) {
            SubscriptionCheck.Reply reply = replies.getOrDefault(e.getKey(), fail(DB_FAILED));
            e.getValue().forEach(p -> reply(p.replyTo(), reply));
        }
        return List.of();
    }

    /** One reply per distinct binding of one project's batch. */
    private Map<JudgedCache.Key, SubscriptionCheck.Reply> judge(
            String project, Map<JudgedCache.Key, List<Pending>> byKey) throws SQLException, TenantDb.Unavailable {
        Map<JudgedCache.Key, SubscriptionCheck.Reply> out = new HashMap<>();
        UUID id;
        try {
            id = UUID.fromString(project);
        } catch (RuntimeException e) {
            byKey.keySet().forEach(k -> out.put(k, fail("Unauthorized: unknown project " + project)));
            return out;
        }
        Set<String> tables = new LinkedHashSet<>();
        byKey.keySet().forEach(k -> tables.add(k.versionTable()));
        Map<String, String> versions = projects.versions(id, tables);
        Map<JudgedCache.Key, BindingRules.Outcome.Valid> toCast = new LinkedHashMap<>();
        for (Map.Entry<JudgedCache.Key, List<Pending>> e : byKey.entrySet()) {
            JudgedCache.Key key = e.getKey();
            String version = versions.get(key.versionTable());
            BindingRules.Outcome outcome = version == null ? null : cache.get(key, version);
            metrics.joinChecksReused.increment(e.getValue().size() - (outcome == null ? 1 : 0));
            if (outcome == null) {
                metrics.joinChecksJudged.increment();
                try {
                    outcome = rules.judge(e.getValue().get(0).request());
                } catch (SQLException ex) {
                    log.warn(
                            "[SubscriptionCheckDbFailed] subscription check failed on the database: {}",
                            ex.getMessage());
                    out.put(key, fail(DB_FAILED));
                    continue;
                }
                if (version != null) {
                    cache.put(key, version, outcome);
                }
            }
            if (outcome instanceof BindingRules.Outcome.Refused refused) {
                out.put(key, fail(refused.reason()));
            } else if (outcome instanceof BindingRules.Outcome.Valid valid) {
                if (valid.casts().isEmpty()) {
                    out.put(key, valid.reply());
                } else {
                    toCast.put(key, valid);
                }
            }
        }
        if (!toCast.isEmpty()) {
            cast(id, toCast, out);
        }
        return out;
    }

    /** Every filter value of the batch cast in one tenant transaction; a binding is valid when all of its cast. */
    private void cast(
            UUID project,
            Map<JudgedCache.Key, BindingRules.Outcome.Valid> toCast,
            Map<JudgedCache.Key, SubscriptionCheck.Reply> out)
            throws TenantDb.Unavailable {
        if (tenant.status().off()) {
            toCast.keySet()
                    .forEach(k -> out.put(
                            k,
                            fail("DatabaseUnavailable: filter values cannot be checked on this server right now, try"
                                    + " again")));
            return;
        }
        List<JoinCasts.CastAsk> asks = new ArrayList<>();
        String schema = null;
        for (BindingRules.Outcome.Valid valid : toCast.values()) {
            schema = valid.schema();
            for (BindingRules.Cast cast : valid.casts()) {
                asks.add(new JoinCasts.CastAsk(
                        valid.castRole(), cast.value(), cast.type().formatted()));
            }
        }
        Map<JoinCasts.CastAsk, JoinCasts.CastVerdict> verdicts =
                casts.castAll(new ProjectIdentity(project.toString()), schema, asks);
        for (Map.Entry<JudgedCache.Key, BindingRules.Outcome.Valid> e : toCast.entrySet()) {
            BindingRules.Outcome.Valid valid = e.getValue();
            SubscriptionCheck.Reply reply = valid.reply();
            for (BindingRules.Cast cast : valid.casts()) {
                JoinCasts.CastVerdict v = verdicts.get(new JoinCasts.CastAsk(
                        valid.castRole(), cast.value(), cast.type().formatted()));
                String invalid = "PostgresChangesInvalidFilter: invalid value for filter " + cast.column() + ": '"
                        + cast.value() + "'";
                if (v == JoinCasts.CastVerdict.INVALID) {
                    reply = fail(invalid + " is not a valid " + cast.type().formatted());
                } else if (v == JoinCasts.CastVerdict.TIMED_OUT) {
                    reply = fail(invalid + " could not be checked within the time limit");
                } else if (v != JoinCasts.CastVerdict.CASTS) {
                    reply = fail(BUSY);
                }
                if (!reply.ok()) {
                    break;
                }
            }
            out.put(e.getKey(), reply);
        }
    }

    private void reply(String replyTo, SubscriptionCheck.Reply reply) {
        if (replyTo == null) {
            return;
        }
        try {
            nats.publish(replyTo, mapper.writeValueAsBytes(reply));
        } catch (Exception e) {
            log.debug("could not reply to a subscription check: {}", e.toString());
        }
    }

    private static SubscriptionCheck.Reply fail(String reason) {
        return new SubscriptionCheck.Reply(false, reason, null);
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            nats.closeDispatcher(dispatcher);
        }
        queue.close();
    }
}
