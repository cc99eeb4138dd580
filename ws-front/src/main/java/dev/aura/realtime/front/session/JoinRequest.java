package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.filter.Filter;
import dev.aura.realtime.common.filter.FilterException;
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
 */
public record JoinRequest(
        boolean self, boolean ack, JsonNode config, List<Binding> bindings, String accessToken, Replay replay) {
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
     */
    public record Binding(int id, String event, String table, String filter, ObjectNode echo) {}

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
                replay(broadcast.path("replay")));
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
                Filter.parse(effectiveFilter);
            } catch (FilterException e) {
                throw new Refused(Reasons.unableToSubscribe(event, schema, table, filter, e.getMessage()));
            }
        }
        int id = BindingIds.of(event, schema == null ? "public" : schema, table, effectiveFilter);
        ObjectNode echo = JsonNodeFactory.instance.objectNode();
        echo.put("id", id);
        for (String field : new String[] {"event", "schema", "table", "filter"}) {
            if (b.has(field)) {
                echo.set(field, b.get(field));
            }
        }
        return new Binding(
                id,
                event.toUpperCase(Locale.ROOT),
                table == null || table.isEmpty() ? "*" : table,
                effectiveFilter,
                echo);
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node.get(field);
        return v != null && v.isTextual() ? v.asText() : null;
    }
}
