package dev.aura.realtime.cdc.catalog;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * Each project's own keys in {@code aura_platform} (docs/security.md "Each project's own keys"):
 * {@code api_keys} (opaque keys, stored as their SHA-256 only, revoked by setting
 * {@code revoked_at}) and {@code token_issuers} (an issuer, an optional audience, a JWKS URL and/or
 * inline public keys; an issuer belongs to one project, a unique constraint). Platform SQL only.
 * Thread-safe (stateless).
 */
public final class ProjectKeysTable {
    /** An API key as listed: never the key, never its hash. */
    public record ApiKey(
            String id,
            String projectId,
            String type,
            String name,
            String prefix,
            Instant insertedAt,
            Instant revokedAt) {}

    /** Whose a presented key is: its project and type ({@code publishable} or {@code secret}). */
    public record KeyOwner(String projectId, String type) {}

    /** A project's token issuer. {@code jwks} is the inline key set's JSON text, or null. */
    public record Issuer(
            String id,
            String projectId,
            String issuer,
            String audience,
            String jwksUrl,
            String jwks,
            Instant insertedAt,
            Instant updatedAt) {}

    /** What {@link #putIssuer} did. */
    public enum Put {
        DONE,
        UNKNOWN_PROJECT,
        /** Another project has this issuer (docs/security.md: an issuer is one project's). */
        TAKEN
    }

    private static final String KEY_COLUMNS = "id::text, project_id::text, type, name, prefix, inserted_at, revoked_at";
    private static final String ISSUER_COLUMNS =
            "id::text, project_id::text, issuer, audience, jwks_url, jwks::text, inserted_at, updated_at";

    private final PlatformDb db;

    public ProjectKeysTable(PlatformDb db) {
        this.db = db;
    }

    /** The project and type of the unrevoked key whose SHA-256 is {@code hash}, or null. */
    public KeyOwner keyOwner(byte[] hash) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement("SELECT project_id::text, type FROM aura_platform.api_keys"
                        + " WHERE key_hash = ? AND revoked_at IS NULL")) {
            ps.setBytes(1, hash);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? new KeyOwner(rs.getString(1), rs.getString(2)) : null;
            }
        }
    }

    /** Stores a new key's hash; null when the project does not exist. */
    public ApiKey createKey(UUID project, String type, String name, String prefix, byte[] hash) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(
                        "INSERT INTO aura_platform.api_keys(project_id, type, name, prefix, key_hash)"
                                + " SELECT project_id, ?, ?, ?, ? FROM aura_platform.projects WHERE project_id = ?"
                                + " RETURNING " + KEY_COLUMNS)) {
            ps.setString(1, type);
            ps.setString(2, name);
            ps.setString(3, prefix);
            ps.setBytes(4, hash);
            ps.setObject(5, project);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? key(rs) : null;
            }
        }
    }

    /** The project's keys, revoked ones included, oldest first. */
    public List<ApiKey> keys(UUID project) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement("SELECT " + KEY_COLUMNS
                        + " FROM aura_platform.api_keys WHERE project_id = ? ORDER BY inserted_at, id")) {
            ps.setObject(1, project);
            try (ResultSet rs = ps.executeQuery()) {
                List<ApiKey> out = new ArrayList<>();
                while (rs.next()) {
                    out.add(key(rs));
                }
                return out;
            }
        }
    }

    /** Revokes the project's key {@code id} (idempotent); null when the project has no such key. */
    public ApiKey revokeKey(UUID project, UUID id) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps =
                        c.prepareStatement("UPDATE aura_platform.api_keys SET revoked_at = coalesce(revoked_at, now())"
                                + " WHERE project_id = ? AND id = ? RETURNING " + KEY_COLUMNS)) {
            ps.setObject(1, project);
            ps.setObject(2, id);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? key(rs) : null;
            }
        }
    }

    /** The issuer configured with {@code iss}, or null. */
    public Issuer issuer(String iss) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT " + ISSUER_COLUMNS + " FROM aura_platform.token_issuers WHERE issuer = ?")) {
            ps.setString(1, iss);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? issuer(rs) : null;
            }
        }
    }

    /** The project's issuers, oldest first. */
    public List<Issuer> issuers(UUID project) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement("SELECT " + ISSUER_COLUMNS
                        + " FROM aura_platform.token_issuers WHERE project_id = ? ORDER BY inserted_at, id")) {
            ps.setObject(1, project);
            try (ResultSet rs = ps.executeQuery()) {
                List<Issuer> out = new ArrayList<>();
                while (rs.next()) {
                    out.add(issuer(rs));
                }
                return out;
            }
        }
    }

    /**
     * Creates the project's issuer {@code iss}, or replaces its audience and keys when the project
     * has it already; {@link Put#TAKEN} when another project has it (nothing changes).
     *
     * @param jwks the inline key set's JSON text, or null
     */
    public Put putIssuer(UUID project, String iss, String audience, String jwksUrl, String jwks) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement("""
                        INSERT INTO aura_platform.token_issuers(project_id, issuer, audience, jwks_url, jwks)
                        SELECT project_id, ?, ?, ?, ?::jsonb FROM aura_platform.projects WHERE project_id = ?
                        ON CONFLICT (issuer) DO UPDATE SET audience = excluded.audience, jwks_url = excluded.jwks_url,
                          jwks = excluded.jwks, updated_at = now()
                          WHERE token_issuers.project_id = excluded.project_id
                        RETURNING id""")) {
            ps.setString(1, iss);
            ps.setString(2, audience);
            ps.setString(3, jwksUrl);
            if (jwks == null) {
                ps.setNull(4, Types.VARCHAR);
            } else {
                ps.setString(4, jwks);
            }
            ps.setObject(5, project);
            try (ResultSet rs = ps.executeQuery()) {
                if (rs.next()) {
                    return Put.DONE;
                }
            }
        }
        return issuer(iss) == null ? Put.UNKNOWN_PROJECT : Put.TAKEN;
    }

    /** Removes the project's issuer {@code id}; false when it has none of that id. */
    public boolean deleteIssuer(UUID project, UUID id) throws SQLException {
        try (Connection c = db.connection();
                PreparedStatement ps =
                        c.prepareStatement("DELETE FROM aura_platform.token_issuers WHERE project_id = ? AND id = ?")) {
            ps.setObject(1, project);
            ps.setObject(2, id);
            return ps.executeUpdate() == 1;
        }
    }

    private static ApiKey key(ResultSet rs) throws SQLException {
        return new ApiKey(
                rs.getString(1),
                rs.getString(2),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                instant(rs.getTimestamp(6)),
                instant(rs.getTimestamp(7)));
    }

    private static Issuer issuer(ResultSet rs) throws SQLException {
        return new Issuer(
                rs.getString(1),
                rs.getString(2),
                rs.getString(3),
                rs.getString(4),
                rs.getString(5),
                rs.getString(6),
                instant(rs.getTimestamp(7)),
                instant(rs.getTimestamp(8)));
    }

    private static Instant instant(Timestamp t) {
        return t == null ? null : t.toInstant();
    }
}
