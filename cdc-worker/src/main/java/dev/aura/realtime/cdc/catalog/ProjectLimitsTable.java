package dev.aura.realtime.cdc.catalog;

import dev.aura.realtime.common.wire.ProjectLimits;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/**
 * Reads a project's row of {@code aura_platform.project_limits} (docs/design.md D8). Platform SQL
 * only. Thread-safe (stateless). The resume window is answered as it is in force (issue 38,
 * docs/design.md R): the project's {@code postgres_changes_resume_seconds}, else (NULL, or no row)
 * the operator's default.
 */
public final class ProjectLimitsTable {
    private static final String SELECT = "SELECT max_concurrent_users, max_events_per_second, max_joins_per_second,"
            + " max_channels_per_client, max_bytes_per_second, max_payload_size_in_kb,"
            + " max_presence_events_per_second, max_checks_per_second, max_registry_bytes, max_presence_bytes,"
            + " postgres_changes_resume_seconds, postgres_changes_history_bytes, max_resume_bytes"
            + " FROM aura_platform.project_limits WHERE project_id = ?";

    /**
     * Every project with at least one realtime table (a project without one has no changes to keep)
     * whose window in force is above 0; {@code ?} is the default window.
     */
    private static final String RESUME = "SELECT p.project_id::text, coalesce(l.postgres_changes_resume_seconds, ?),"
            + " coalesce(l.postgres_changes_history_bytes, " + ProjectLimits.DEFAULT_HISTORY_BYTES + ")"
            + " FROM aura_platform.projects p LEFT JOIN aura_platform.project_limits l USING (project_id)"
            + " WHERE coalesce(l.postgres_changes_resume_seconds, ?) > 0"
            + " AND EXISTS (SELECT 1 FROM aura_platform.realtime_tables t WHERE t.project_id = p.project_id)";

    private static final String LONGEST =
            "SELECT greatest(?, coalesce(max(postgres_changes_resume_seconds), 0)) FROM aura_platform.project_limits";

    /** A project with postgres_changes resume on: its window and its history bound. */
    public record Resume(String projectId, int windowSeconds, long historyBytes) {}

    private final PlatformDb db;
    private final int defaultResumeSeconds;

    /** @param defaultResumeSeconds the window of a project that sets none ({@code AURA_RESUME_DEFAULT_SECONDS}) */
    public ProjectLimitsTable(PlatformDb db, int defaultResumeSeconds) {
        this.db = db;
        this.defaultResumeSeconds = defaultResumeSeconds;
    }

    /**
     * The project's overrides, with the resume window in force; {@link ProjectLimits#DEFAULTS}
     * (and the default window) without a row or for an id that is no UUID.
     */
    public ProjectLimits of(String projectId) throws SQLException {
        UUID id;
        try {
            id = UUID.fromString(projectId);
        } catch (IllegalArgumentException | NullPointerException e) {
            return ProjectLimits.DEFAULTS.withResumeSeconds(defaultResumeSeconds);
        }
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(SELECT)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return ProjectLimits.DEFAULTS.withResumeSeconds(defaultResumeSeconds);
                }
                Integer window = integer(rs, 11);
                return new ProjectLimits(
                        integer(rs, 1),
                        integer(rs, 2),
                        integer(rs, 3),
                        integer(rs, 4),
                        integer(rs, 5),
                        integer(rs, 6),
                        integer(rs, 7),
                        integer(rs, 8),
                        bigint(rs, 9),
                        bigint(rs, 10),
                        window == null ? defaultResumeSeconds : window,
                        bigint(rs, 12),
                        bigint(rs, 13));
            }
        }
    }

    /**
     * Every project with resume on (docs/design.md R): its window in force (its own, else the
     * default) above 0, and a realtime table.
     */
    public java.util.List<Resume> resumeProjects() throws SQLException {
        java.util.List<Resume> out = new java.util.ArrayList<>();
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(RESUME)) {
            ps.setInt(1, defaultResumeSeconds);
            ps.setInt(2, defaultResumeSeconds);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(new Resume(rs.getString(1), rs.getInt(2), rs.getLong(3)));
                }
            }
        }
        return out;
    }

    /** The longest resume window in force of any project, in seconds: the default or a longer override. */
    public int longestWindow() throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(LONGEST)) {
            ps.setInt(1, defaultResumeSeconds);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getInt(1) : defaultResumeSeconds;
            }
        }
    }

    private static Long bigint(ResultSet rs, int column) throws SQLException {
        long v = rs.getLong(column);
        return rs.wasNull() ? null : v;
    }

    private static Integer integer(ResultSet rs, int column) throws SQLException {
        int v = rs.getInt(column);
        return rs.wasNull() ? null : v;
    }
}
