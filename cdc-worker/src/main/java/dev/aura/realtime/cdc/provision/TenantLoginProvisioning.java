package dev.aura.realtime.cdc.provision;

import dev.aura.realtime.cdc.catalog.PlatformDb;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGConnection;

/**
 * Creates or corrects the tenant login from the platform login, when that login may (superuser
 * or CREATEROLE; docs/security.md): {@code LOGIN NOINHERIT}, none of SUPERUSER, CREATEDB,
 * CREATEROLE, REPLICATION, BYPASSRLS, the given password (hashed by the driver, so the clear text
 * never reaches the server's log), and no role membership: any is revoked (it executes the
 * projects' runners, granted to it by name, docs/design.md I). Idempotent, under the bootstrap's advisory lock (replicas start at once), so every
 * replica of a release may run it at every start.
 */
public final class TenantLoginProvisioning {
    /** What happened. */
    public sealed interface Outcome {
        /** The login exists as described. */
        record Provisioned() implements Outcome {}

        /** The platform login may not manage roles; {@code why} says what it lacks (no tenant text). */
        record NotPermitted(String why) implements Outcome {}
    }

    private TenantLoginProvisioning() {}

    /**
     * @throws SQLException when Postgres fails for another reason than a missing privilege
     *     (retried by the caller)
     */
    public static Outcome ensure(PlatformDb db, String login, String password) throws SQLException {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try {
                Outcome outcome = ensure(c, login, password);
                c.commit();
                return outcome;
            } catch (SQLException e) {
                c.rollback();
                if ("42501".equals(e.getSQLState())) {
                    return new Outcome.NotPermitted(
                            "the POSTGRES_URL login cannot manage " + login + ": " + e.getMessage());
                }
                throw e;
            }
        }
    }

    private static Outcome ensure(Connection c, String login, String password) throws SQLException {
        boolean superuser;
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT pg_advisory_xact_lock(" + PlatformSchema.LOCK_KEY
                        + "), rolsuper, rolcreaterole" + " FROM pg_roles WHERE rolname = current_user")) {
            if (!rs.next() || !(rs.getBoolean(2) || rs.getBoolean(3))) {
                return new Outcome.NotPermitted("the POSTGRES_URL login is neither superuser nor CREATEROLE");
            }
            superuser = rs.getBoolean(2);
        }
        String role = ident(login);
        try (Statement s = c.createStatement()) {
            if (!exists(c, login)) {
                s.execute("CREATE ROLE " + role + " LOGIN NOINHERIT");
            }
            // Only a superuser may name SUPERUSER, REPLICATION or BYPASSRLS, even to deny them; a
            // CREATEROLE login cannot grant them either, and the worker verifies the result anyway.
            s.execute("ALTER ROLE " + role + " LOGIN NOINHERIT NOCREATEDB NOCREATEROLE"
                    + (superuser ? " NOSUPERUSER NOREPLICATION NOBYPASSRLS" : ""));
            // no membership at all: tenant code reaches this login only through a project's runner,
            // which runs as that project's role (docs/design.md I); a membership would lend it more
            for (String other : memberships(c, login)) {
                s.execute("REVOKE " + ident(other) + " FROM " + role);
            }
        }
        c.unwrap(PGConnection.class).alterUserPassword(login, password.toCharArray(), null);
        return new Outcome.Provisioned();
    }

    private static boolean exists(Connection c, String login) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_roles WHERE rolname = ?")) {
            ps.setString(1, login);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private static List<String> memberships(Connection c, String login) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT r.rolname FROM pg_auth_members m
                  JOIN pg_roles r ON r.oid = m.roleid
                  JOIN pg_roles u ON u.oid = m.member
                 WHERE u.rolname = ?""")) {
            ps.setString(1, login);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }
}
