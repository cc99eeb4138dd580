package dev.aura.realtime.cdc.rpc;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.platform.ProjectCatalog;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.filter.Filter;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.io.IOException;
import java.sql.SQLException;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers ws-front's join-time question "is this postgres_changes binding valid?" on
 * {@link Subjects#SUBSCRIPTION_CHECK} (queue group {@code aura-cdc-worker}: any replica,
 * leader or not, answers). Valid means: the project exists, the table is enabled for realtime
 * (unless {@code *}), the filter parses, names an existing column, and each value casts to that
 * column's type in Postgres. So an invalid filter fails at join, not at delivery.
 *
 * <p>The project, table and column lookups are platform SQL ({@link ProjectCatalog}); the cast
 * evaluates the tenant's type and runs as tenant SQL ({@link TenantDb#casts}).
 *
 * <p>Threads: replies are computed on virtual threads, never on the jnats dispatcher thread.
 */
public final class SubscriptionCheckService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionCheckService.class);
    static final String QUEUE = "aura-cdc-worker";

    private final Connection nats;
    private final ProjectCatalog projects;
    private final TenantDb tenant;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private Dispatcher dispatcher;

    public SubscriptionCheckService(Connection nats, ProjectCatalog projects, TenantDb tenant) {
        this.nats = nats;
        this.projects = projects;
        this.tenant = tenant;
    }

    public void start() {
        dispatcher = nats.createDispatcher();
        dispatcher.subscribe(Subjects.SUBSCRIPTION_CHECK, QUEUE, msg -> workers.execute(() -> answer(msg)));
    }

    private void answer(Message msg) {
        SubscriptionCheck.Reply reply;
        try {
            SubscriptionCheck.Request req = mapper.readValue(msg.getData(), SubscriptionCheck.Request.class);
            reply = check(req);
        } catch (IOException e) {
            reply = new SubscriptionCheck.Reply(
                    false, "MalformedMessage: subscription check request is not valid JSON", null);
        } catch (SQLException e) {
            log.warn("[SubscriptionCheckDbFailed] subscription check failed on the database: {}", e.getMessage());
            reply = new SubscriptionCheck.Reply(
                    false, "DatabaseUnavailable: could not validate the subscription, try again", null);
        }
        if (msg.getReplyTo() != null) {
            try {
                nats.publish(msg.getReplyTo(), mapper.writeValueAsBytes(reply));
            } catch (Exception e) {
                log.debug("could not reply to a subscription check: {}", e.toString());
            }
        }
    }

    private SubscriptionCheck.Reply check(SubscriptionCheck.Request req) throws SQLException {
        String table = req.table() == null || req.table().isEmpty() ? "*" : req.table();
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
        if (req.filter() == null || req.filter().isEmpty()) {
            return new SubscriptionCheck.Reply(true, null, null);
        }
        Filter filter;
        try {
            filter = Filter.parse(req.filter());
        } catch (FilterException e) {
            return fail("PostgresChangesInvalidFilter: " + e.getMessage());
        }
        Optional<ProjectCatalog.ColumnType> type = projects.columnType(schema.get(), table, filter.column());
        if (type.isEmpty()) {
            return fail("PostgresChangesInvalidFilter: invalid column for filter " + filter.column());
        }
        for (String value : filter.values()) {
            if (!tenant.casts(value, type.get().formatted())) {
                return fail("PostgresChangesInvalidFilter: invalid value for filter " + filter.column() + ": '" + value
                        + "' is not a valid " + type.get().formatted());
            }
        }
        return new SubscriptionCheck.Reply(true, null, type.get().typname());
    }

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
