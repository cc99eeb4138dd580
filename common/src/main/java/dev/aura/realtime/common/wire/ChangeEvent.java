package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * A decoded row change as published by the cdc-worker on {@link Subjects#changes}.
 *
 * <p>{@code data} is exactly the {@code data} object of the Supabase Realtime
 * {@code postgres_changes} push: {@code {schema, table, commit_timestamp, type, columns, record,
 * old_record, errors}} with {@code schema} already mapped to the client-facing name
 * ({@code public}). ws-front serialises it once per event and sends
 * {@code {"ids": [...], "data": <data>}} to each local binding listed in {@code allowedSubIds}.
 *
 * @param eventId stable id {@code <commit LSN>:<ordinal>} (same on re-delivery)
 * @param projectId the project's uuid (from the schema's row in {@code aura_platform.projects})
 * @param table table name, unquoted, case-sensitive
 * @param type INSERT, UPDATE, DELETE or TRUNCATE
 * @param allowedSubIds registry subscription ids allowed to see the change; empty reaches no one
 * @param data the client payload's {@code data} object
 */
public record ChangeEvent(
        @JsonProperty("event_id") String eventId,
        @JsonProperty("project_id") String projectId,
        @JsonProperty("table") String table,
        @JsonProperty("type") String type,
        @JsonProperty("allowed_sub_ids") List<String> allowedSubIds,
        @JsonProperty("data") JsonNode data) {

    public ChangeEvent {
        allowedSubIds = allowedSubIds == null ? List.of() : List.copyOf(allowedSubIds);
    }
}
