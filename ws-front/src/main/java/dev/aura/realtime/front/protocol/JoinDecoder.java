package dev.aura.realtime.front.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.Filters;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Turns a {@code phx_join} payload into a {@link JoinConfig}, once, at the edge. Input the join
 * cannot be served with (too many bindings, a bad binding, a bad replay) becomes the join's
 * refusal, in Supabase's words where Supabase has them; the channel layer answers it with the
 * join's error reply in its place among the join's other refusals (docs/protocol.md section 3).
 * Immutable, thread-safe.
 */
public final class JoinDecoder {
    private static final Set<String> EVENTS = Set.of("*", "INSERT", "UPDATE", "DELETE");

    private final int maxBindings;

    /**
     * @param maxBindings postgres_changes bindings allowed in one join ({@code WS_MAX_BINDINGS_PER_JOIN});
     *     more refuse the join before any is validated (each would cost a registry entry and a
     *     database check)
     */
    public JoinDecoder(int maxBindings) {
        this.maxBindings = maxBindings;
    }

    /** A payload the join cannot be served with; {@link #getMessage()} is the reason to reply. */
    public static final class Invalid extends Exception {
        Invalid(String reason) {
            super(reason, null, false, false);
        }
    }

    /** The join of {@code payload} (an object): its config, or its refusal. */
    public PhoenixMessage.Join join(String joinRef, String ref, String topic, JsonNode payload, String lastEventId) {
        try {
            return new PhoenixMessage.Join(joinRef, ref, topic, decode(payload, maxBindings), null, lastEventId);
        } catch (Invalid e) {
            return new PhoenixMessage.Join(joinRef, ref, topic, null, e.getMessage(), lastEventId);
        }
    }

    /** The config of a join payload; throws the refusal of input it cannot be served with. */
    public static JoinConfig decode(JsonNode payload, int maxBindings) throws Invalid {
        JsonNode config = payload.path("config");
        if (!config.isObject()) {
            config = JsonNodeFactory.instance.objectNode();
        }
        JsonNode broadcast = config.path("broadcast");
        List<JoinConfig.Binding> bindings = new ArrayList<>();
        JsonNode changes = config.path("postgres_changes");
        if (changes.isArray()) {
            if (changes.size() > maxBindings) {
                throw new Invalid(Reasons.tooManyBindings(maxBindings));
            }
            for (JsonNode b : changes) {
                bindings.add(binding(b));
            }
        }
        JsonNode token = payload.path("access_token");
        return new JoinConfig(
                new JoinConfig.Broadcast(
                        broadcast.path("self").asBoolean(false),
                        broadcast.path("ack").asBoolean(false),
                        replay(broadcast.path("replay")),
                        broadcast.path("replication_ready").asBoolean(false)),
                presence(config.path("presence")),
                bindings,
                options(config.path("postgres_changes_options")),
                config.path("private").asBoolean(false),
                token.isTextual() ? token.asText() : null);
    }

    private static JoinConfig.Presence presence(JsonNode presence) {
        boolean enabled = presence.path("enabled").asBoolean(false);
        JsonNode key = presence.path("key");
        String keyText = key.isValueNode() && !key.isNull() ? key.asText() : "";
        return !enabled && keyText.isEmpty() ? JoinConfig.Presence.OFF : new JoinConfig.Presence(enabled, keyText);
    }

    private static JoinConfig.PostgresChangesOptions options(JsonNode options) {
        JsonNode resumeKey = options.path("resume_key");
        JsonNode since = options.path("since");
        return new JoinConfig.PostgresChangesOptions(
                waitMs(options),
                options.path("event_id").asBoolean(false),
                resumeKey.isTextual() ? resumeKey.asText() : null,
                since.isTextual() ? since.asText() : null);
    }

    private static long waitMs(JsonNode options) {
        if (!options.path("wait").asBoolean(false)) {
            return 0;
        }
        JsonNode timeout = options.path("timeout");
        long ms = timeout.isNumber() && timeout.asLong() > 0 ? timeout.asLong() : JoinConfig.DEFAULT_WAIT_MS;
        return Math.min(ms, JoinConfig.MAX_WAIT_MS);
    }

    private static JoinConfig.Replay replay(JsonNode r) throws Invalid {
        if (r.isMissingNode() || r.isNull()) {
            return null;
        }
        if (!r.isObject()
                || !r.path("since").canConvertToLong()
                || !r.path("since").isNumber()) {
            throw new Invalid(Reasons.INVALID_REPLAY);
        }
        JsonNode limit = r.path("limit");
        int n = JoinConfig.DEFAULT_REPLAY_LIMIT;
        if (!limit.isMissingNode() && !limit.isNull()) {
            if (!limit.canConvertToInt() || limit.asInt() < 1) {
                throw new Invalid(Reasons.INVALID_REPLAY);
            }
            n = limit.asInt();
        }
        return new JoinConfig.Replay(r.path("since").asLong(), n);
    }

    private static JoinConfig.Binding binding(JsonNode b) throws Invalid {
        String event = text(b, "event");
        String schema = text(b, "schema");
        String table = text(b, "table");
        String filter = text(b, "filter");
        if (!b.isObject() || event == null || !EVENTS.contains(event.toUpperCase(Locale.ROOT))) {
            throw new Invalid(Reasons.unableToSubscribe(
                    event, schema, table, filter, "event must be *, INSERT, UPDATE or DELETE"));
        }
        if (schema != null && !schema.equals("public")) {
            throw new Invalid(
                    Reasons.unableToSubscribe(event, schema, table, filter, "only schema public is available"));
        }
        String effectiveFilter = filter == null || filter.isEmpty() ? null : filter;
        if (effectiveFilter != null) {
            try {
                Filters.parse(effectiveFilter);
            } catch (FilterException e) {
                throw new Invalid(Reasons.unableToSubscribe(event, schema, table, filter, e.getMessage()));
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
        return new JoinConfig.Binding(id, upperEvent, effectiveTable, effectiveFilter, echo, select);
    }

    /**
     * {@code select}: absent or null for every column, else a non-empty array of distinct column
     * names, kept in the client's order (the id depends on it, as realtime-js's pairing does).
     */
    private static List<String> select(JsonNode b, String event, String schema, String table, String filter)
            throws Invalid {
        JsonNode s = b.get("select");
        if (s == null || s.isNull()) {
            return null;
        }
        if (!s.isArray() || s.isEmpty() || s.size() > SubscriptionEntry.MAX_SELECT_COLUMNS) {
            throw new Invalid(Reasons.unableToSubscribe(
                    event, schema, table, filter, "select must be a non-empty array of column names"));
        }
        List<String> columns = new ArrayList<>(s.size());
        for (JsonNode c : s) {
            if (!c.isTextual() || c.asText().isEmpty() || columns.contains(c.asText())) {
                throw new Invalid(Reasons.unableToSubscribe(
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
