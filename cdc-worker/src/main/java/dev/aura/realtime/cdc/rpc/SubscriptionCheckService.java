package dev.aura.realtime.cdc.rpc;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.platform.ClientRoles;
import dev.aura.realtime.cdc.platform.ProjectCatalog;
import dev.aura.realtime.cdc.platform.TableSecurity;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.filter.Filter;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.FilterOp;
import dev.aura.realtime.common.filter.Filters;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.io.IOException;
import java.sql.SQLException;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
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
 * <p>The project, table, column and grant lookups are platform SQL ({@link ProjectCatalog},
 * {@link TableSecurity}); the cast evaluates the tenant's type and runs as tenant SQL under the
 * subscriber's role ({@link TenantDb#casts}).
 *
 * <p>Threads: replies are computed on virtual threads, never on the jnats dispatcher thread; at
 * most {@code maxConcurrent} at once.
 */
public final class SubscriptionCheckService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionCheckService.class);
    static final String QUEUE = "aura-cdc-worker";
    /** How long a check waits to be admitted; ws-front gives up after SUBSCRIPTION_CHECK_TIMEOUT_MS (2 s). */
    private static final long ADMISSION_WAIT_MS = 1_000;

    private final Connection nats;
    private final ProjectCatalog projects;
    private final TableSecurity security;
    private final TenantDb tenant;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore admission;
    private Dispatcher dispatcher;

    /**
     * @param maxConcurrent checks answered at once; the rest wait up to a second, then are told to
     *     retry, so a flood of joins cannot take the platform pool the shards also read the catalog on
     */
    public SubscriptionCheckService(
            Connection nats, ProjectCatalog projects, TableSecurity security, TenantDb tenant, int maxConcurrent) {
        this.nats = nats;
        this.admission = new Semaphore(maxConcurrent);
        this.projects = projects;
        this.security = security;
        this.tenant = tenant;
    }

    public void start() {
        dispatcher = nats.createDispatcher();
        dispatcher.subscribe(Subjects.SUBSCRIPTION_CHECK, QUEUE, msg -> workers.execute(() -> answer(msg)));
    }

    private void answer(Message msg) {
        SubscriptionCheck.Reply reply;
        boolean admitted = false;
        try {
            admitted = admission.tryAcquire(ADMISSION_WAIT_MS, TimeUnit.MILLISECONDS);
            if (!admitted) {
                reply = new SubscriptionCheck.Reply(
                        false, "DatabaseUnavailable: too many subscription checks at once, try again", null);
            } else {
                SubscriptionCheck.Request req = mapper.readValue(msg.getData(), SubscriptionCheck.Request.class);
                reply = check(req);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (IOException e) {
            reply = new SubscriptionCheck.Reply(
                    false, "MalformedMessage: subscription check request is not valid JSON", null);
        } catch (SQLException | TenantDb.Unavailable e) {
            log.warn("[SubscriptionCheckDbFailed] subscription check failed on the database: {}", e.getMessage());
            reply = new SubscriptionCheck.Reply(
                    false, "DatabaseUnavailable: could not validate the subscription, try again", null);
        } catch (RuntimeException e) {
            // e.g. tenant SQL switched off between the status check and the cast
            log.warn("[SubscriptionCheckDbFailed] subscription check failed: {}", e.toString());
            reply = new SubscriptionCheck.Reply(
                    false, "DatabaseUnavailable: could not validate the subscription, try again", null);
        } finally {
            if (admitted) {
                admission.release();
            }
        }
        if (msg.getReplyTo() != null) {
            try {
                nats.publish(msg.getReplyTo(), mapper.writeValueAsBytes(reply));
            } catch (Exception e) {
                log.debug("could not reply to a subscription check: {}", e.toString());
            }
        }
    }

    private SubscriptionCheck.Reply check(SubscriptionCheck.Request req) throws SQLException, TenantDb.Unavailable {
        String table = req.table() == null || req.table().isEmpty() ? "*" : req.table();
        String event = req.event() == null ? "*" : req.event().toUpperCase(Locale.ROOT);
        String params =
                "[schema: public, table: " + table + ", filters: [" + (req.filter() == null ? "" : req.filter()) + "]]";
        UUID project;
        try {
            project = UUID.fromString(req.projectId());
        } catch (RuntimeException e) {
            return fail("Unauthorized: unknown project " + req.projectId());
        }
        Optional<String> schema = projects.schemaOf(project);
        if (schema.isEmpty()) {
            return fail("RealtimeDisabledForConfiguration: project " + project + " is not registered for realtime");
        }
        boolean service = ClientRoles.SERVICE_ROLE.equals(req.role());
        String pgRole = ClientRoles.of(req.role());
        if (req.role() != null && !service && pgRole == null) {
            return fail("Unauthorized: role '" + req.role()
                    + "' cannot receive postgres_changes (anon, authenticated or service_role)");
        }
        if (table.equals("*")) {
            if (req.filter() != null && !req.filter().isEmpty()) {
                return fail("PostgresChangesInvalidFilter: a filter needs a table, not '*'");
            }
            return new SubscriptionCheck.Reply(true, null, null);
        }
        if (!projects.enabled(project, table)) {
            return fail("RealtimeDisabledForConfiguration: Unable to subscribe to changes with given parameters. "
                    + "Please check Realtime is enabled for the given connect parameters: " + params);
        }
        if (req.select() != null) {
            for (String column : req.select()) {
                if (projects.columnType(schema.get(), table, column).isEmpty()) {
                    return fail("PostgresChangesInvalidFilter: invalid column in select " + column);
                }
            }
        }
        if (req.filter() == null || req.filter().isEmpty()) {
            return new SubscriptionCheck.Reply(true, null, null);
        }
        Filters filters;
        try {
            filters = Filters.parse(req.filter());
        } catch (FilterException e) {
            return fail("PostgresChangesInvalidFilter: " + e.getMessage());
        }
        TableSecurity.Facts facts = security.facts(schema.get(), table);
        String notice = null;
        String firstType = null;
        java.util.List<Cast> casts = new java.util.ArrayList<>();
        for (Filter filter : filters.conditions()) {
            Optional<ProjectCatalog.ColumnType> type = projects.columnType(schema.get(), table, filter.column());
            if (type.isEmpty()) {
                return fail("PostgresChangesInvalidFilter: invalid column for filter " + filter.column());
            }
            if (firstType == null) {
                firstType = type.get().typname();
            }
            if (filter.op() == FilterOp.IS || filter.op().isPattern()) {
                // is.true/false/unknown need a boolean column, patterns a text column (as in Postgres);
                // the values of the other operators are cast by the database below
                try {
                    filter.checkValues(type.get().typname());
                } catch (FilterException e) {
                    return fail("PostgresChangesInvalidFilter: " + e.getMessage());
                }
            }
            if (pgRole != null
                    && !facts.selectsTable().contains(pgRole)
                    && !facts.selectable(pgRole).contains(filter.column())) {
                return fail("PostgresChangesInvalidFilter: invalid column for filter " + filter.column() + ": role "
                        + req.role() + " may not select it");
            }
            if (!service && facts.rowSecurity() && !facts.pkColumns().contains(filter.column())) {
                String why = "table " + table + " has row level security and a deleted row cannot be checked, so"
                        + " DELETE events can only be filtered by its primary key ("
                        + String.join(", ", facts.pkColumns()) + ")";
                if (event.equals("DELETE")) {
                    return fail("PostgresChangesInvalidFilter: invalid column for DELETE filter " + filter.column()
                            + ": " + why);
                }
                if (event.equals("*")) {
                    notice = "PostgresChangesDeleteNotDelivered: DELETE events are not delivered to the binding with"
                            + " filter " + req.filter() + ": " + why
                            + ". Subscribe to DELETE separately to receive them";
                }
            }
            for (String value : filter.castValues()) {
                casts.add(new Cast(filter.column(), value, type.get()));
            }
        }
        if (casts.isEmpty()) {
            return new SubscriptionCheck.Reply(true, null, firstType, notice);
        }
        if (tenant.status().off()) {
            return fail("DatabaseUnavailable: filter values cannot be checked on this server right now, try again");
        }
        String castRole = pgRole != null ? pgRole : ClientRoles.AUTHENTICATED;
        for (Cast cast : casts) {
            String value = cast.value();
            ProjectCatalog.ColumnType type = cast.type();
            String column = cast.column();
            switch (tenant.casts(castRole, schema.get(), value, type.formatted())) {
                case CASTS -> {}
                case INVALID -> {
                    return fail("PostgresChangesInvalidFilter: invalid value for filter " + column + ": '" + value
                            + "' is not a valid " + type.formatted());
                }
                case TIMED_OUT -> {
                    return fail("PostgresChangesInvalidFilter: invalid value for filter " + column + ": '" + value
                            + "' could not be checked within the time limit");
                }
                case BUSY -> {
                    return fail("DatabaseUnavailable: too many subscription checks at once, try again");
                }
            }
        }
        return new SubscriptionCheck.Reply(true, null, firstType, notice);
    }

    /** A filter value the database must cast to its column's type. */
    private record Cast(String column, String value, ProjectCatalog.ColumnType type) {}

    private static SubscriptionCheck.Reply fail(String reason) {
        return new SubscriptionCheck.Reply(false, reason, null);
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            nats.closeDispatcher(dispatcher);
        }
        workers.shutdownNow();
    }
}
