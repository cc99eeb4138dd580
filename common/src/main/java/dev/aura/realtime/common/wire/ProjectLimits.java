package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One project's overrides of the per-project limits (docs/design.md D8), as stored in
 * {@code aura_platform.project_limits} and answered on {@link Subjects#PROJECT_LIMITS}: ws-front
 * asks with {@link Request}, any cdc-worker replica answers with this record. A null field means
 * "the global default" (ws-front's {@code PROJECT_*} and {@code WS_*} variables); a project
 * without a row gets all nulls. Names follow Supabase's tenant settings.
 *
 * @param maxConcurrentUsers connections of the project across replicas
 * @param maxEventsPerSecond client broadcast and presence messages per second, across replicas
 * @param maxJoinsPerSecond channel joins per second, across replicas
 * @param maxChannelsPerClient channels one connection may join
 * @param maxBytesPerSecond client message payload bytes per second, across replicas
 * @param maxPayloadSizeInKb largest broadcast payload, in KB of 1,024 bytes
 * @param maxPresenceEventsPerSecond presence track/untrack per second, across replicas
 * @param maxChecksPerSecond subscription checks per second that joins may cause (one per distinct
 *     postgres_changes binding, one per private channel), across replicas
 * @param maxRegistryBytes bytes the project's entries may occupy in the registry bucket, across replicas
 * @param maxPresenceBytes bytes the project's presences may occupy in the presence bucket, across replicas
 * @param postgresChangesResumeSeconds the resume window of postgres_changes (issues 27, 38;
 *     docs/design.md R): the cdc-worker answers the project's own, else its operator default
 *     ({@code AURA_RESUME_DEFAULT_SECONDS}); 0 = off, null = not known
 * @param postgresChangesHistoryBytes the bound in bytes of the project's change history stream
 * @param maxResumeBytes bytes the project's resume records and pointers may occupy in the
 *     {@code aura_resume} bucket, across replicas
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ProjectLimits(
        @JsonProperty("max_concurrent_users") Integer maxConcurrentUsers,
        @JsonProperty("max_events_per_second") Integer maxEventsPerSecond,
        @JsonProperty("max_joins_per_second") Integer maxJoinsPerSecond,
        @JsonProperty("max_channels_per_client") Integer maxChannelsPerClient,
        @JsonProperty("max_bytes_per_second") Integer maxBytesPerSecond,
        @JsonProperty("max_payload_size_in_kb") Integer maxPayloadSizeInKb,
        @JsonProperty("max_presence_events_per_second") Integer maxPresenceEventsPerSecond,
        @JsonProperty("max_checks_per_second") Integer maxChecksPerSecond,
        @JsonProperty("max_registry_bytes") Long maxRegistryBytes,
        @JsonProperty("max_presence_bytes") Long maxPresenceBytes,
        @JsonProperty("postgres_changes_resume_seconds") Integer postgresChangesResumeSeconds,
        @JsonProperty("postgres_changes_history_bytes") Long postgresChangesHistoryBytes,
        @JsonProperty("max_resume_bytes") Long maxResumeBytes) {

    /** No overrides: every limit is the global default. */
    public static final ProjectLimits DEFAULTS =
            new ProjectLimits(null, null, null, null, null, null, null, null, null, null, null, null, null);

    /** The column default of {@code postgres_changes_history_bytes}: 64 MiB. */
    public static final long DEFAULT_HISTORY_BYTES = 64L * 1024 * 1024;

    /** Without the resume columns (resume off). */
    public ProjectLimits(
            Integer maxConcurrentUsers,
            Integer maxEventsPerSecond,
            Integer maxJoinsPerSecond,
            Integer maxChannelsPerClient,
            Integer maxBytesPerSecond,
            Integer maxPayloadSizeInKb,
            Integer maxPresenceEventsPerSecond,
            Integer maxChecksPerSecond,
            Long maxRegistryBytes,
            Long maxPresenceBytes) {
        this(
                maxConcurrentUsers,
                maxEventsPerSecond,
                maxJoinsPerSecond,
                maxChannelsPerClient,
                maxBytesPerSecond,
                maxPayloadSizeInKb,
                maxPresenceEventsPerSecond,
                maxChecksPerSecond,
                maxRegistryBytes,
                maxPresenceBytes,
                null,
                null,
                null);
    }

    /** These overrides with the resume window {@code seconds} in force for the project. */
    public ProjectLimits withResumeSeconds(int seconds) {
        return new ProjectLimits(
                maxConcurrentUsers,
                maxEventsPerSecond,
                maxJoinsPerSecond,
                maxChannelsPerClient,
                maxBytesPerSecond,
                maxPayloadSizeInKb,
                maxPresenceEventsPerSecond,
                maxChecksPerSecond,
                maxRegistryBytes,
                maxPresenceBytes,
                seconds,
                postgresChangesHistoryBytes,
                maxResumeBytes);
    }

    /** The resume window in seconds; 0 when resume is off. */
    public int resumeSeconds() {
        return postgresChangesResumeSeconds == null ? 0 : Math.max(0, postgresChangesResumeSeconds);
    }

    /** The history bound in bytes ({@link #DEFAULT_HISTORY_BYTES} when unknown). */
    public long historyBytes() {
        return postgresChangesHistoryBytes == null || postgresChangesHistoryBytes <= 0
                ? DEFAULT_HISTORY_BYTES
                : postgresChangesHistoryBytes;
    }

    /** Overrides of the rate and size limits only; checks and bucket shares are the defaults. */
    public ProjectLimits(
            Integer maxConcurrentUsers,
            Integer maxEventsPerSecond,
            Integer maxJoinsPerSecond,
            Integer maxChannelsPerClient,
            Integer maxBytesPerSecond,
            Integer maxPayloadSizeInKb,
            Integer maxPresenceEventsPerSecond) {
        this(
                maxConcurrentUsers,
                maxEventsPerSecond,
                maxJoinsPerSecond,
                maxChannelsPerClient,
                maxBytesPerSecond,
                maxPayloadSizeInKb,
                maxPresenceEventsPerSecond,
                null,
                null,
                null,
                null,
                null,
                null);
    }

    /** The question: the overrides of {@code projectId}. */
    public record Request(@JsonProperty("project_id") String projectId) {}
}
