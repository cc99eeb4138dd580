package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.Filters;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * One postgres_changes binding of one client channel, as ws-front stores it in the JetStream KV
 * bucket {@link #BUCKET} under key {@link #key} (docs/design.md C8). The cdc-worker watches the
 * bucket and matches every change against these entries.
 *
 * <p>The bucket is writable by every ws-front, so the cdc-worker trusts no entry: it
 * {@link #problem validates} each one before it can match anything (docs/design.md C8, G), and
 * ws-front checks its own entries the same way before writing them, so a client is told at join
 * instead of being silently ignored.
 *
 * @param subId unique id of this binding instance (uuid); listed in {@link ChangeEvent#allowedSubIds}
 * @param projectId the subscriber's project (from its JWT {@code ref})
 * @param table table name as the client gave it; {@code *} for every enabled table
 * @param event {@code *}, INSERT, UPDATE or DELETE
 * @param filter Supabase filter text ({@code col=op.value[,col=op.value...]}, see {@code Filters}) or null
 * @param role the JWT {@code role} claim (anon, authenticated, service_role, ...)
 * @param claims the whole JWT claim set, passed to Postgres as {@code request.jwt.claims}
 * @param expiresAtMs token expiry, epoch milliseconds; entries past it are ignored
 * @param instance the ws-front instance that owns the binding
 * @param select the binding's {@code select} columns (only those reach the client in
 *     {@code record}, {@code old_record} and {@code columns}), or null for every column
 */
@com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
public record SubscriptionEntry(
        @JsonProperty("sub_id") String subId,
        @JsonProperty("project_id") String projectId,
        @JsonProperty("table") String table,
        @JsonProperty("event") String event,
        @JsonProperty("filter") String filter,
        @JsonProperty("role") String role,
        @JsonProperty("claims") JsonNode claims,
        @JsonProperty("expires_at_ms") long expiresAtMs,
        @JsonProperty("instance") String instance,
        @JsonProperty("select") java.util.List<String> select) {

    /** At most this many {@code select} columns. */
    public static final int MAX_SELECT_COLUMNS = 256;

    @com.fasterxml.jackson.annotation.JsonCreator
    public SubscriptionEntry {
        select = select == null ? null : java.util.List.copyOf(select);
    }

    /** An entry without {@code select} (every column). */
    public SubscriptionEntry(
            String subId,
            String projectId,
            String table,
            String event,
            String filter,
            String role,
            JsonNode claims,
            long expiresAtMs,
            String instance) {
        this(subId, projectId, table, event, filter, role, claims, expiresAtMs, instance, null);
    }

    /** JetStream KV bucket of postgres_changes bindings (memory storage). */
    public static final String BUCKET = "aura_subscriptions";
    /**
     * The bucket's least max age: an entry not refreshed for this long is dead (its owner crashed).
     * The bucket's max age in force is {@link #maxAgeFor} the longest resume window, at least this
     * (the cdc-worker sets it, docs/design.md R).
     */
    public static final java.time.Duration MAX_AGE = java.time.Duration.ofSeconds(120);
    /** How often owners re-put their live entries (well inside {@link #MAX_AGE}). */
    public static final java.time.Duration REFRESH_INTERVAL = java.time.Duration.ofSeconds(30);
    /** What the max age keeps beyond a resume window and one refresh: clocks and NATS latency. */
    public static final java.time.Duration WINDOW_MARGIN = java.time.Duration.ofSeconds(10);

    /**
     * The bucket's max age for a longest resume window of {@code windowSeconds}: an entry of a
     * replica killed right before its next refresh must outlive the window after the kill, and a
     * parked entry (written once) the window after parking.
     */
    public static java.time.Duration maxAgeFor(int windowSeconds) {
        java.time.Duration needed = java.time.Duration.ofSeconds(Math.max(0, windowSeconds))
                .plus(REFRESH_INTERVAL)
                .plus(WINDOW_MARGIN);
        return needed.compareTo(MAX_AGE) > 0 ? needed : MAX_AGE;
    }

    /** The longest resume window (seconds) a bucket of max age {@code maxAge} holds the entries of. */
    public static int longestWindowWithin(java.time.Duration maxAge) {
        return (int)
                Math.max(0, maxAge.minus(REFRESH_INTERVAL).minus(WINDOW_MARGIN).toSeconds());
    }

    /** Largest entry (serialised JSON) a reader accepts; also the bucket's max value size. */
    public static final int MAX_BYTES = 64 * 1024;
    /** Longest filter text (the filter language allows 100 {@code in} values). */
    public static final int MAX_FILTER_CHARS = 16 * 1024;
    /** Longest table name: Postgres identifiers have at most 63 bytes (NAMEDATALEN - 1). */
    public static final int MAX_TABLE_BYTES = 63;
    /** Longest owning instance id. */
    public static final int MAX_INSTANCE_CHARS = 256;
    /** The roles the product knows (docs/design.md C7); any other is refused. */
    public static final Set<String> ROLES = Set.of("anon", "authenticated", "service_role");
    /** The events a binding can name. */
    public static final Set<String> EVENTS = Set.of("*", "INSERT", "UPDATE", "DELETE");
    /** Project and sub ids: one KV key token each (no dot), at most 64 characters. */
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /** KV key {@code <project_id>.<sub_id>} (KV keys allow {@code [-/_=.a-zA-Z0-9]}). */
    public static String key(String projectId, String subId) {
        return projectId + "." + subId;
    }

    public String key() {
        return key(projectId, subId);
    }

    /**
     * Why this entry, read under KV key {@code key}, must not match anything, or null when it is
     * valid: every field present and within its size, ids that form exactly {@code key} (so an
     * entry cannot claim a project other than the key it was written under), a known event and
     * role, claims whose project ({@code ref}, else {@code project_id}) and role are the entry's
     * own, a positive expiry, and a filter that parses. The serialised size is the caller's
     * check ({@link #MAX_BYTES}), made before parsing.
     */
    public String problem(String key) {
        if (subId == null || !ID.matcher(subId).matches()) {
            return "sub_id must match " + ID.pattern();
        }
        if (projectId == null || !ID.matcher(projectId).matches()) {
            return "project_id must match " + ID.pattern();
        }
        if (!key(projectId, subId).equals(key)) {
            return "key " + key + " is not <project_id>.<sub_id> of the entry (project " + projectId + ")";
        }
        if (table == null || table.isEmpty() || table.getBytes(StandardCharsets.UTF_8).length > MAX_TABLE_BYTES) {
            return "table must have 1 to " + MAX_TABLE_BYTES + " bytes";
        }
        if (event == null || !EVENTS.contains(event)) {
            return "event must be one of " + EVENTS;
        }
        if (role == null || !ROLES.contains(role)) {
            return "role must be one of " + ROLES;
        }
        if (claims == null || !claims.isObject()) {
            return "claims must be a JSON object";
        }
        JsonNode ref = claims.get("ref");
        JsonNode claimedProject = ref != null && ref.isTextual() ? ref : claims.get("project_id");
        if (claimedProject == null || !projectId.equals(claimedProject.asText(null))) {
            return "the claims' project (ref, else project_id) is not the entry's project " + projectId;
        }
        JsonNode claimedRole = claims.get("role");
        if (claimedRole == null || !role.equals(claimedRole.asText(null))) {
            return "the claims' role is not the entry's role " + role;
        }
        if (expiresAtMs <= 0) {
            return "expires_at_ms must be positive";
        }
        if (instance == null || instance.isEmpty() || instance.length() > MAX_INSTANCE_CHARS) {
            return "instance must have 1 to " + MAX_INSTANCE_CHARS + " characters";
        }
        if (select != null) {
            if (select.isEmpty() || select.size() > MAX_SELECT_COLUMNS) {
                return "select must name 1 to " + MAX_SELECT_COLUMNS + " columns";
            }
            for (String column : select) {
                if (column == null
                        || column.isEmpty()
                        || column.getBytes(StandardCharsets.UTF_8).length > MAX_TABLE_BYTES) {
                    return "select columns must have 1 to " + MAX_TABLE_BYTES + " bytes";
                }
            }
        }
        if (filter != null && !filter.isEmpty()) {
            if (filter.length() > MAX_FILTER_CHARS) {
                return "filter longer than " + MAX_FILTER_CHARS + " characters";
            }
            try {
                Filters.parse(filter);
            } catch (FilterException e) {
                return "filter does not parse: " + e.getMessage();
            }
        }
        return null;
    }
}
