package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Request/reply on {@link Subjects#SUBSCRIPTION_CHECK}: ws-front asks, at join, whether a
 * postgres_changes binding is valid (table enabled for realtime, filter column exists and the
 * subscriber's role may select it, value castable to the column's type, a DELETE binding of a
 * table with row level security filtered by its primary key only). Any cdc-worker replica
 * answers (queue group), leader or not.
 */
public final class SubscriptionCheck {
    private SubscriptionCheck() {}

    /**
     * The question; {@code table} may be {@code *}. {@code event} ({@code *}, INSERT, UPDATE or
     * DELETE) and {@code role} (the token's {@code role} claim) may be null when an older
     * ws-front asks: the worker then checks as for {@code *} and skips the role's grants (they
     * are enforced again at delivery). {@code select} (null for every column) names the columns
     * the binding receives: each must exist.
     */
    public record Request(
            @JsonProperty("project_id") String projectId,
            @JsonProperty("table") String table,
            @JsonProperty("filter") String filter,
            @JsonProperty("event") String event,
            @JsonProperty("role") String role,
            @JsonProperty("select") java.util.List<String> select) {

        /** A request without event and role (as older ws-front replicas send it). */
        public Request(String projectId, String table, String filter) {
            this(projectId, table, filter, null, null, null);
        }

        /** A request without {@code select}. */
        public Request(String projectId, String table, String filter, String event, String role) {
            this(projectId, table, filter, event, role, null);
        }
    }

    /**
     * The answer. {@code error} is a Supabase-style reason ({@code "Code: message"}) or null;
     * {@code columnType} is the filter column's typname, so both sides compare values alike;
     * {@code notice} (also {@code "Code: message"}) is set on a valid binding that will not receive
     * everything its event asks for (a {@code *} binding of a table with row level security whose
     * filter tests a non-key column gets no DELETE), so the client is told at join rather than
     * left waiting.
     */
    public record Reply(
            @JsonProperty("ok") boolean ok,
            @JsonProperty("error") String error,
            @JsonProperty("column_type") String columnType,
            @JsonProperty("notice") String notice) {

        public Reply(boolean ok, String error, String columnType) {
            this(ok, error, columnType, null);
        }
    }
}
