package dev.aura.realtime.cdc.catalog;

import dev.aura.realtime.common.wire.ProjectLimits;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;

/**
 * Reads a project's row of {@code aura_platform.project_limits} (docs/design.md D8). Platform SQL
 * only. Thread-safe (stateless).
 */
public final class ProjectLimitsTable {
    private static final String SELECT = "SELECT max_concurrent_users, max_events_per_second, max_joins_per_second,"
            + " max_channels_per_client, max_bytes_per_second, max_payload_size_in_kb,"
            + " max_presence_events_per_second, max_checks_per_second, max_registry_bytes, max_presence_bytes,"
            + " postgres_changes_resume_seconds, postgres_changes_history_bytes FROM aura_platform.project_limits WHERE project_id = ?";

    private static final String RESUME = "SELECT project_id::text, postgres_changes_resume_seconds,"
            + " postgres_changes_history_bytes FROM aura_platform.project_limits"
            + " WHERE postgres_changes_resume_seconds > 0";

    /** A project with postgres_changes resume on: its window and its history bound. */
    public record Resume(String projectId, int windowSeconds, long historyBytes) {}

    private final PlatformDb db;

    public ProjectLimitsTable(PlatformDb db) {
        this.db = db;
    }

    /** The project's overrides; {@link ProjectLimits#DEFAULTS} without a row or for an id that is no UUID. */
    public ProjectLimits of(String projectId) throws SQLException {
        UUID id;
        try {
            id = UUID.fromString(projectId);
        } catch (IllegalArgumentException | NullPointerException e) {
            return ProjectLimits.DEFAULTS;
        }
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(SELECT)) {
            ps.setObject(1, id);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    return ProjectLimits.DEFAULTS;
                }
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
                        integer(rs, 11),
                        bigint(rs, 12));
            }
        }
    }

    /** Every project with {@code postgres_changes_resume_seconds > 0} (docs/design.md R). */
    public java.util.List<Resume> resumeProjects() throws SQLException {
        java.util.List<Resume> out = new java.util.ArrayList<>();
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(RESUME);
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new Resume(rs.getString(1), rs.getInt(2), rs.getLong(3)));
            }
        }
        return out;
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
