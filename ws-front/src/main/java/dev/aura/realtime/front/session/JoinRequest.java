package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.Filters;
import dev.aura.realtime.front.protocol.Reasons;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A validated {@code phx_join} payload:
 * {@code {"config":{"broadcast":{"self","ack"},"presence":{"key","enabled"},"postgres_changes":[..],
 * "private"},"access_token"}}. Parsed once at the edge; a refusal carries the error reason.
 *
 * @param self {@code config.broadcast.self}
 * @param ack {@code config.broadcast.ack}
 * @param config the {@code config} object (empty when absent)
 * @param bindings the postgres_changes bindings in client order
 * @param accessToken {@code access_token} or null
 * @param replay {@code config.broadcast.replay}, or null when absent
 * @param waitMs {@code config.postgres_changes_options}: with {@code wait: true}, how long the
 *     join may wait for its postgres_changes to flow (its {@code timeout}, default
 *     {@value #DEFAULT_WAIT_MS} ms, at most {@value #MAX_WAIT_MS}); 0 without {@code wait}
 */
public record JoinRequest(
        boolean self,
        boolean ack,
        JsonNode config,
        List<Binding> bindings,
        String accessToken,
        Replay replay,
        long waitMs) {
    /**
     * {@code config.broadcast.replication_ready} (realtime-js 2.119): after the ok reply the
     * channel is told, as a {@code system} message, once changes flow (or that they did not in time).
     */
    public boolean replicationReady() {
        return config.path("broadcast").path("replication_ready").asBoolean(false);
    }

    /** realtime-js's default {@code postgres_changes_options.timeout}. */
    public static final long DEFAULT_WAIT_MS = 15_000;
    /** The longest wait a client may ask for (Supabase's default maximum); longer asks wait this long. */
    public static final long MAX_WAIT_MS = 20_000;

    /** Replay limit when the client gives none (Supabase's default and maximum are 25). */
    public static final int DEFAULT_REPLAY_LIMIT = 25;

    /**
     * {@code config.broadcast.replay}: history broadcasts sent at or after {@code sinceMs}, at most
     * {@code limit} (the newest ones).
     */
    public record Replay(long sinceMs, int limit) {}

    private static final Set<String> EVENTS = Set.of("*", "INSERT", "UPDATE", "DELETE");

    /**
     * One requested binding.
     *
     * @param id the server id
     * @param event upper-cased event
     * @param table table or {@code *}
     * @param filter filter or null (also for an empty string)
     * @param echo the client's values to echo, with {@code id}
     * @param select the {@code select} columns, or null for every column
     */
    public record Binding(int id, String event, String table, String filter, ObjectNode echo, List<String> select) {
        /**
         * What the server subscribes to: two bindings with equal subscriptions are identical (one
         * check, one registry entry, one id), whatever spelling of it the client echo keeps.
         */
        public Subscription subscription() {
            return new Subscription(event, table, filter, select);
        }
    }

    /** A binding's normalised parameters (upper-cased event, {@code *} for no table, null for no filter). */
    public record Subscription(String event, String table, String filter, List<String> select) {}

    /**
     * The bindings the server subscribes to: the first of each set of identical bindings
     * ({@link Binding#subscription()}), in client order. Each costs one subscription check and one
     * registry entry; the reply still echoes every client binding ({@link #bindings()}).
     */
    public List<Binding> distinct() {
        Set<Subscription> seen = new java.util.HashSet<>();
        List<Binding> out = new ArrayList<>();
        for (Binding b : bindings) {
            if (seen.add(b.subscription())) {
                out.add(b);
            }
        }
        return out;
    }

    /** {@code config.private}: the join asks a read check of the channel. */
    public boolean isPrivate() {
        return config.path("private").asBoolean(false);
    }

    /**
     * The subscription checks this join causes, what the project's checks budget counts: one per
     * distinct binding, plus the read check of a private channel.
     */
    public int checks() {
        return distinct().size() + (isPrivate() ? 1 : 0);
    }

    /** A join the payload alone already refuses. */
    public static final class Refused extends Exception {
        private final String reason;

        Refused(String reason) {
            super(reason, null, false, false);
            this.reason = reason;
        }

        public String reason() {
            return reason;
        }
    }

    /**
     * @param maxBindings postgres_changes bindings allowed; more refuse the join before any is
     *     validated (each would cost a registry entry and a database check)
     */
    public static JoinRequest parse(JsonNode payload, int maxBindings) throws Refused {
        JsonNode config = payload.path("config");
        if (!config.isObject()) {
            config = JsonNodeFactory.instance.objectNode();
        }
        JsonNode broadcast = config.path("broadcast");
        boolean self = broadcast.path("self").asBoolean(false);
        boolean ack = broadcast.path("ack").asBoolean(false);
        List<Binding> bindings = new ArrayList<>();
        JsonNode changes = config.path("postgres_changes");
        if (changes.isArray()) {
            if (changes.size() > maxBindings) {
                throw new Refused(Reasons.tooManyBindings(maxBindings));
            }
            for (JsonNode b : changes) {
                bindings.add(binding(b));
            }
        }
        JsonNode token = payload.path("access_token");
        return new JoinRequest(
                self,
                ack,
                config,
                bindings,
                token.isTextual() ? token.asText() : null,
                replay(broadcast.path("replay")),
                waitMs(config.path("postgres_changes_options")));
    }

    private static long waitMs(JsonNode options) {
        if (!options.path("wait").asBoolean(false)) {
            return 0;
        }
        JsonNode timeout = options.path("timeout");
        long ms = timeout.isNumber() && timeout.asLong() > 0 ? timeout.asLong() : DEFAULT_WAIT_MS;
        return Math.min(ms, MAX_WAIT_MS);
    }

    private static Replay replay(JsonNode r) throws Refused {
        if (r.isMissingNode() || r.isNull()) {
            return null;
        }
        if (!r.isObject()
                || !r.path("since").canConvertToLong()
                || !r.path("since").isNumber()) {
            throw new Refused(Reasons.INVALID_REPLAY);
        }
        JsonNode limit = r.path("limit");
        int n = DEFAULT_REPLAY_LIMIT;
        if (!limit.isMissingNode() && !limit.isNull()) {
            if (!limit.canConvertToInt() || limit.asInt() < 1) {
                throw new Refused(Reasons.INVALID_REPLAY);
            }
            n = limit.asInt();
        }
        return new Replay(r.path("since").asLong(), n);
    }

    private static Binding binding(JsonNode b) throws Refused {
        String event = text(b, "event");
        String schema = text(b, "schema");
        String table = text(b, "table");
        String filter = text(b, "filter");
        if (!b.isObject() || event == null || !EVENTS.contains(event.toUpperCase(Locale.ROOT))) {
            throw new Refused(Reasons.unableToSubscribe(
                    event, schema, table, filter, "event must be *, INSERT, UPDATE or DELETE"));
        }
        if (schema != null && !schema.equals("public")) {
            throw new Refused(
                    Reasons.unableToSubscribe(event, schema, table, filter, "only schema public is available"));
        }
        String effectiveFilter = filter == null || filter.isEmpty() ? null : filter;
        if (effectiveFilter != null) {
            try {
                Filters.parse(effectiveFilter);
            } catch (FilterException e) {
                throw new Refused(Reasons.unableToSubscribe(event, schema, table, filter, e.getMessage()));
            }
        }
        List<String> select = select(b, event, schema, table, filter);
        String effectiveTable = table == null || table.isEmpty() ? "*" : table;
        String upperEvent = event.toUpperCase(Locale.ROOT);
        // from the normalised parameters: identical bindings, however spelled, share one id
        int id = BindingIds.of(upperEvent, "public", effectiveTable, effectiveFilter, select);
        ObjectNode echo = JsonNodeFactory.instance.objectNode();
        echo.put("id", id);
        for (String field : new String[] {"event", "schema", "table", "filter", "select"}) {
            if (b.has(field)) {
                echo.set(field, b.get(field));
            }
        }
        return new Binding(id, upperEvent, effectiveTable, effectiveFilter, echo, select);
    }

    /**
     * {@code select}: absent or null for every column, else a non-empty array of distinct column
     * names, kept in the client's order (the id depends on it, as realtime-js's pairing does).
     */
    private static List<String> select(JsonNode b, String event, String schema, String table, String filter)
            throws Refused {
        JsonNode s = b.get("select");
        if (s == null || s.isNull()) {
            return null;
        }
        if (!s.isArray()
                || s.isEmpty()
                || s.size() > dev.aura.realtime.common.wire.SubscriptionEntry.MAX_SELECT_COLUMNS) {
            throw new Refused(Reasons.unableToSubscribe(
                    event, schema, table, filter, "select must be a non-empty array of column names"));
        }
        List<String> columns = new ArrayList<>(s.size());
        for (JsonNode c : s) {
            if (!c.isTextual() || c.asText().isEmpty() || columns.contains(c.asText())) {
                throw new Refused(Reasons.unableToSubscribe(
                        event, schema, table, filter, "select must be a non-empty array of distinct column names"));
            }
            columns.add(c.asText());
        }
        return List.copyOf(columns);
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }
}
