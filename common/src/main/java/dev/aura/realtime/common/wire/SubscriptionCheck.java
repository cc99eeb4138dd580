package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * Request/reply on {@link Subjects#SUBSCRIPTION_CHECK}: ws-front asks, at join, whether a
 * postgres_changes binding is valid (table enabled for realtime, filter column exists, value
 * castable to the column's type). Any cdc-worker replica answers (queue group), leader or not.
 */
public final class SubscriptionCheck {
    private SubscriptionCheck() {}

    /** The question; {@code table} may be {@code *}. */
    public record Request(
            @JsonProperty("project_id") String projectId,
            @JsonProperty("table") String table,
            @JsonProperty("filter") String filter) {}

    /**
     * The answer. {@code error} is a Supabase-style reason ({@code "Code: message"}) or null;
     * {@code columnType} is the filter column's typname, so both sides compare values alike.
     */
    public record Reply(
            @JsonProperty("ok") boolean ok,
            @JsonProperty("error") String error,
            @JsonProperty("column_type") String columnType) {}
}
