package dev.aura.realtime.cdc.rpc;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.filter.Filter;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import dev.aura.realtime.common.wire.WireJson;
import io.nats.client.Connection;
import io.nats.client.Dispatcher;
import io.nats.client.Message;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Answers ws-front's join-time question "is this postgres_changes binding valid?" on
 * {@link Subjects#SUBSCRIPTION_CHECK} (queue group {@code aura-cdc-worker}: any replica,
 * leader or not, answers). Valid means: the project exists, the table is enabled for realtime
 * (unless {@code *}), the filter parses, names an existing column, and each value casts to that
 * column's type in Postgres. So an invalid filter fails at join, not at delivery.
 *
 * <p>Threads: replies are computed on virtual threads, never on the jnats dispatcher thread.
 */
public final class SubscriptionCheckService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SubscriptionCheckService.class);
    static final String QUEUE = "aura-cdc-worker";

    private final Connection nats;
    private final DataSource db;
    private final ObjectMapper mapper = WireJson.mapper();
    private final ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor();
    private Dispatcher dispatcher;

    public SubscriptionCheckService(Connection nats, DataSource db) {
        this.nats = nats;
        this.db = db;
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
        } catch (java.io.IOException e) {
            reply = new SubscriptionCheck.Reply(
                    false, "MalformedMessage: subscription check request is not valid JSON", null);
        } catch (SQLException e) {
            log.warn("subscription check failed on the database: {}", e.getMessage());
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

    /** The check itself; public for tests. */
    public SubscriptionCheck.Reply check(SubscriptionCheck.Request req) throws SQLException {
        String table = req.table() == null || req.table().isEmpty() ? "*" : req.table();
        String params =
                "[schema: public, table: " + table + ", filters: [" + (req.filter() == null ? "" : req.filter()) + "]]";
        UUID project;
        try {
            project = UUID.fromString(req.projectId());
        } catch (RuntimeException e) {
            return fail("Unauthorized: unknown project " + req.projectId());
        }
        try (java.sql.Connection c = db.getConnection()) {
            String schema = schemaOf(c, project);
            if (schema == null) {
                return fail("RealtimeDisabledForConfiguration: project " + project + " is not registered for realtime");
            }
            if (table.equals("*")) {
                if (req.filter() != null && !req.filter().isEmpty()) {
                    return fail("PostgresChangesInvalidFilter: a filter needs a table, not '*'");
                }
                return new SubscriptionCheck.Reply(true, null, null);
            }
            if (!enabled(c, project, table)) {
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
            String[] type = columnType(c, schema, table, filter.column());
            if (type == null) {
                return fail("PostgresChangesInvalidFilter: invalid column for filter " + filter.column());
            }
            for (String value : filter.values()) {
                if (!casts(c, value, type[1])) {
                    return fail("PostgresChangesInvalidFilter: invalid value for filter " + filter.column() + ": '"
                            + value + "' is not a valid " + type[1]);
                }
            }
            return new SubscriptionCheck.Reply(true, null, type[0]);
        }
    }

    private static SubscriptionCheck.Reply fail(String reason) {
        return new SubscriptionCheck.Reply(false, reason, null);
    }

    private static String schemaOf(java.sql.Connection c, UUID project) throws SQLException {
        try (PreparedStatement ps =
                c.prepareStatement("SELECT schema_name FROM aura_platform.projects WHERE project_id = ?")) {
            ps.setObject(1, project);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getString(1) : null;
            }
        }
    }

    private static boolean enabled(java.sql.Connection c, UUID project, String table) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT enabled FROM aura_platform.realtime_tables WHERE project_id = ? AND table_name = ?")) {
            ps.setObject(1, project);
            ps.setString(2, table);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getBoolean(1);
            }
        }
    }

    /** @return {typname, format_type} of the column, or null when there is no such column */
    private static String[] columnType(java.sql.Connection c, String schema, String table, String column)
            throws SQLException {
        String sql = """
                SELECT t.typname, format_type(a.atttypid, NULL)
                  FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
                 WHERE a.attrelid = to_regclass(format('%I.%I', ?::text, ?::text))
                   AND a.attname = ? AND a.attnum > 0 AND NOT a.attisdropped""";
        try (PreparedStatement ps = c.prepareStatement(sql)) {
            ps.setString(1, schema);
            ps.setString(2, table);
            ps.setString(3, column);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new String[] {rs.getString(1), rs.getString(2)} : null;
            }
        }
    }

    /** Casts in Postgres itself, so "castable" means exactly what the database accepts. */
    private static boolean casts(java.sql.Connection c, String value, String formattedType) throws SQLException {
        boolean auto = c.getAutoCommit();
        c.setAutoCommit(false);
        try (PreparedStatement ps = c.prepareStatement("SELECT CAST(?::text AS " + formattedType + ")")) {
            ps.setString(1, value);
            ps.executeQuery().close();
            return true;
        } catch (SQLException e) {
            if (e.getSQLState() != null
                    && (e.getSQLState().startsWith("22") || e.getSQLState().startsWith("42"))) {
                return false;
            }
            throw e;
        } finally {
            c.rollback();
            c.setAutoCommit(auto);
        }
    }

    @Override
    public void close() {
        if (dispatcher != null) {
            nats.closeDispatcher(dispatcher);
        }
        workers.shutdownNow();
    }
}
