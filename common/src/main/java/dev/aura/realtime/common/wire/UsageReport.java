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
     */
    public record Counts(
            @JsonProperty("u") int users,
            @JsonProperty("j") int joins,
            @JsonProperty("e") int events,
            @JsonProperty("b") long bytes,
            @JsonProperty("p") int presence) {}
}
