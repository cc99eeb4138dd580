package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.ProjectLimits;

/**
 * Where a project's limit overrides come from (a cdc-worker, through the relay). Never blocks:
 * answers what it knows and fetches in the background; {@link ProjectLimits#DEFAULTS} until then.
 */
public interface ProjectLimitsSource {
    ProjectLimits overrides(String projectId);

    /** No overrides for anyone (tests, and before the relay is up). */
    ProjectLimitsSource NONE = projectId -> ProjectLimits.DEFAULTS;
}
