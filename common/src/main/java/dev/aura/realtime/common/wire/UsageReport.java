package dev.aura.realtime.common.wire;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Map;

/**
 * What one ws-front replica tells the others on {@link Subjects#USAGE} every
 * {@code PROJECT_USAGE_INTERVAL_MS}: per project with any activity, its open connections now and
 * what it admitted in the last whole second. Each replica enforces the per-project limits on
 * its own counts plus the others' last reports (docs/design.md D8), so the cluster-wide counts
 * are approximate: the report is up to one interval old when it arrives.
 *
 * @param instance the sending replica's {@code INSTANCE_ID}
 * @param projects project id to its counts
 */
public record UsageReport(
        @JsonProperty("instance") String instance,
        @JsonProperty("projects") Map<String, Counts> projects) {

    /**
     * @param users open connections (WebSocket or SSE)
     * @param joins joins admitted in the last whole second
     * @param events client messages admitted in the last whole second
     * @param bytes client message payload bytes admitted in the last whole second
     * @param presence presence events admitted in the last whole second
     * @param checks subscription checks (distinct postgres_changes bindings and private channels'
     *     read checks) of the joins admitted in the last whole second; 0 from a replica that predates it
     * @param registryBytes bytes this replica's live registry entries (and their recent delete
     *     markers) of the project occupy in the registry bucket now
     * @param presenceBytes the same in the presence bucket
     * @param resumeBytes the same in the {@code aura_resume} bucket (resume records and pointers)
     * @param refused connections, joins, client messages and presence events refused by the
     *     project's limits in the last whole second (the inspector shows it, docs/design.md D9); 0
     *     from a replica that predates it
     */
    public record Counts(
            @JsonProperty("u") int users,
            @JsonProperty("j") int joins,
            @JsonProperty("e") int events,
            @JsonProperty("b") long bytes,
            @JsonProperty("p") int presence,
            @JsonProperty("c") int checks,
            @JsonProperty("rb") long registryBytes,
            @JsonProperty("pb") long presenceBytes,
            @JsonProperty("sb") long resumeBytes,
            @JsonProperty("rf") int refused) {

        /** The counts of a report without resume bytes and refusals (as older replicas send). */
        public Counts(
                int users,
                int joins,
                int events,
                long bytes,
                int presence,
                int checks,
                long registryBytes,
                long presenceBytes) {
            this(users, joins, events, bytes, presence, checks, registryBytes, presenceBytes, 0, 0);
        }

        /** The counts of a report without checks and bucket bytes (as older replicas send). */
        public Counts(int users, int joins, int events, long bytes, int presence) {
            this(users, joins, events, bytes, presence, 0, 0, 0, 0, 0);
        }
    }
}
