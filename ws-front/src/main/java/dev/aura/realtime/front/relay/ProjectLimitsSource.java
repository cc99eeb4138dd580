package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.ProjectLimits;

/**
 * Where a project's limit overrides come from (a cdc-worker, through the relay). Never blocks:
 * answers what it knows and fetches in the background; {@link ProjectLimits#DEFAULTS} until then.
 */
public interface ProjectLimitsSource {
    ProjectLimits overrides(String projectId);

    /** Whether {@link #overrides} answers what a cdc-worker said (not only the defaults of a first look-up). */
    default boolean known(String projectId) {
        return true;
    }

    /** No overrides for anyone (tests, and before the relay is up). */
    ProjectLimitsSource NONE = projectId -> ProjectLimits.DEFAULTS;
}
