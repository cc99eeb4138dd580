package dev.aura.realtime.cdc.tenant;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * Verifies, on a connection of the tenant login, that the login lends tenant code nothing beyond
 * the client roles (docs/security.md): after {@code RESET ROLE} tenant code runs as the session
 * user, so that user must not be superuser, have BYPASSRLS, CREATEROLE or REPLICATION, be a member
 * (directly or not) of any role but the client roles, or own any relation, schema or function in
 * the database; the client roles themselves must not carry such attributes.
 */
final class TenantLoginCheck {
    private static final String SQL = """
            SELECT r.rolname, r.rolsuper, r.rolbypassrls, r.rolcreaterole, r.rolreplication,
                   (SELECT string_agg(o.rolname, ', ' ORDER BY o.rolname) FROM pg_roles o
                     WHERE o.oid <> r.oid AND o.rolname <> ALL (?) AND pg_has_role(r.oid, o.oid, 'MEMBER')),
                   (SELECT string_agg(o.rolname, ', ' ORDER BY o.rolname) FROM pg_roles o
                     WHERE o.rolname = ANY (?)
                       AND (o.rolsuper OR o.rolbypassrls OR o.rolcreaterole OR o.rolreplication)),
                   EXISTS (SELECT 1 FROM pg_class WHERE relowner = r.oid)
                       OR EXISTS (SELECT 1 FROM pg_namespace WHERE nspowner = r.oid)
                       OR EXISTS (SELECT 1 FROM pg_proc WHERE proowner = r.oid)
              FROM pg_roles r WHERE r.rolname = session_user""";

    private TenantLoginCheck() {}

    /** @return the status of the login of {@code c}: usable, or {@link TenantSqlStatus#PRIVILEGED} with what it has */
    static TenantSqlStatus verify(Connection c, List<String> clientRoles) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(SQL)) {
            ps.setArray(1, c.createArrayOf("text", clientRoles.toArray()));
            ps.setArray(2, c.createArrayOf("text", clientRoles.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    throw new SQLException("the session user is not in pg_roles");
                }
                String login = rs.getString(1);
                List<String> problems = new ArrayList<>();
                String[] attributes = {"SUPERUSER", "BYPASSRLS", "CREATEROLE", "REPLICATION"};
                for (int i = 0; i < attributes.length; i++) {
                    if (rs.getBoolean(2 + i)) {
                        problems.add("has " + attributes[i]);
                    }
                }
                if (rs.getString(6) != null) {
                    problems.add("is a member of " + rs.getString(6));
                }
                if (rs.getString(7) != null) {
                    problems.add("its client roles are privileged (" + rs.getString(7) + ")");
                }
                if (rs.getBoolean(8)) {
                    problems.add("owns objects in this database");
                }
                if (problems.isEmpty()) {
                    return TenantSqlStatus.ok(login);
                }
                return TenantSqlStatus.not(
                        login,
                        TenantSqlStatus.PRIVILEGED,
                        "tenant login " + login + " " + String.join(", ", problems)
                                + "; RLS checks and filter casts are off until it has no privilege beyond "
                                + String.join(", ", clientRoles));
            }
        }
    }
}
