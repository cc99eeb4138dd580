package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;

/**
 * One postgres_changes binding of one client channel, as ws-front stores it in the JetStream KV
 * bucket {@link #BUCKET} under key {@link #key} (docs/design.md C8). The cdc-worker watches the
 * bucket and matches every change against these entries.
 *
 * @param subId unique id of this binding instance (uuid); listed in {@link ChangeEvent#allowedSubIds}
 * @param projectId the subscriber's project (from its JWT {@code ref})
 * @param table table name as the client gave it; {@code *} for every enabled table
 * @param event {@code *}, INSERT, UPDATE or DELETE
 * @param filter Supabase filter text ({@code col=op.value}) or null
 * @param role the JWT {@code role} claim (anon, authenticated, service_role, ...)
 * @param claims the whole JWT claim set, passed to Postgres as {@code request.jwt.claims}
 * @param expiresAtMs token expiry, epoch milliseconds; entries past it are ignored
 * @param instance the ws-front instance that owns the binding
 */
public record SubscriptionEntry(
        @JsonProperty("sub_id") String subId,
        @JsonProperty("project_id") String projectId,
        @JsonProperty("table") String table,
        @JsonProperty("event") String event,
        @JsonProperty("filter") String filter,
        @JsonProperty("role") String role,
        @JsonProperty("claims") JsonNode claims,
        @JsonProperty("expires_at_ms") long expiresAtMs,
        @JsonProperty("instance") String instance) {

    /** JetStream KV bucket of postgres_changes bindings (memory storage). */
    public static final String BUCKET = "aura_subscriptions";
    /** The bucket's max age: an entry not refreshed for this long is dead (its owner crashed). */
    public static final java.time.Duration MAX_AGE = java.time.Duration.ofSeconds(120);
    /** How often owners re-put their live entries (well inside {@link #MAX_AGE}). */
    public static final java.time.Duration REFRESH_INTERVAL = java.time.Duration.ofSeconds(30);

    /** KV key {@code <project_id>.<sub_id>} (KV keys allow {@code [-/_=.a-zA-Z0-9]}). */
    public static String key(String projectId, String subId) {
        return projectId + "." + subId;
    }

    public String key() {
        return key(projectId, subId);
    }
}
