package dev.aura.realtime.cdc.provision;

import dev.aura.realtime.cdc.identity.ProjectIdentity;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.postgresql.PGConnection;

/**
 * Provisions a project's database identity ({@link ProjectIdentity}, docs/design.md I) from the
 * platform login, inside {@link RealtimeSchemas#ensure}'s transaction: the two project roles and
 * the project login, their memberships (and no other), the runners, and {@code USAGE} on the
 * project's schemas for the project's roles only ({@code PUBLIC} and the shared client roles lose
 * it, so a grant to {@code aura_anon} no longer reaches across projects). Idempotent.
 *
 * <p>Needs a superuser platform login, or a CREATEROLE one (which then grants itself the project
 * roles for the duration of the transaction, to hand the runners to them); revoking a grant the
 * schema's owner made needs a superuser.
 */
final class ProjectIdentities {
    /**
     * The runner body: executes our query text with our arguments as the project role. Tenant code
     * the query reaches (policies, types' input functions, domain checks, triggers) runs as that
     * role and inside a security-definer context, where Postgres refuses role changes. It first
     * checks that it does run as that role (%2$s): a runner made SECURITY INVOKER (which the
     * confinement guard refuses, docs/security.md) would otherwise run tenant code as its caller,
     * the shared tenant login. The owner may change the runner's settings but not its body
     * (that needs CREATE on aura_rls), so the check holds whatever {@code search_path} it is given:
     * its operator is named in full.
     */
    private static final String RUNNER = "(query text, args text[]) RETURNS SETOF text[] LANGUAGE plpgsql VOLATILE"
            + " SECURITY DEFINER SET search_path = pg_catalog, %1$s, pg_temp AS $$ BEGIN"
            + " IF CURRENT_USER OPERATOR(pg_catalog.<>) %2$s::pg_catalog.name THEN"
            + " RAISE EXCEPTION 'ConfinementBroken: this runner does not run as %%', %2$s USING ERRCODE = '42501';"
            + " END IF; RETURN QUERY EXECUTE query USING args; END $$";

    private ProjectIdentities() {}

    /**
     * @param tenantLogin the shared tenant login that may execute the runners, or null when not known yet
     *     (then {@link #grantRunners} grants it later)
     * @param loginPassword the project login's password
     */
    static void ensure(
            Connection c,
            UUID project,
            String projectSchema,
            String realtimeSchema,
            String tenantLogin,
            String loginPassword)
            throws SQLException {
        ProjectIdentity id = ProjectIdentity.of(project);
        String anon = id.role(ProjectIdentity.ANON);
        String authenticated = id.role(ProjectIdentity.AUTHENTICATED);
        boolean superuser = superuser(c);
        try (Statement s = c.createStatement()) {
            for (String role : List.of(anon, authenticated)) {
                create(c, s, role, "NOLOGIN INHERIT");
                s.execute("ALTER ROLE " + ident(role) + " NOLOGIN INHERIT NOCREATEDB NOCREATEROLE"
                        + (superuser ? " NOSUPERUSER NOREPLICATION NOBYPASSRLS" : ""));
            }
            create(c, s, id.login(), "LOGIN NOINHERIT");
            s.execute("ALTER ROLE " + ident(id.login()) + " LOGIN NOINHERIT NOCREATEDB NOCREATEROLE"
                    + (superuser ? " NOSUPERUSER NOREPLICATION NOBYPASSRLS" : ""));
            s.execute("ALTER ROLE " + ident(id.login()) + " RESET ALL");
            // memberships: exactly these, whatever was granted meanwhile
            // the project login is a member of nothing: it reaches the project's roles only through
            // the runners, so code running on it outside one (a deferred trigger at COMMIT) can
            // SET ROLE to nothing, not even, through a project role, to a shared one
            reconcile(c, s, anon, List.of(ProjectIdentity.ANON), List.of());
            reconcile(c, s, authenticated, List.of(ProjectIdentity.AUTHENTICATED), List.of());
            reconcile(c, s, id.login(), List.of(), List.of());
            s.execute("GRANT " + ProjectIdentity.ANON + " TO " + ident(anon));
            s.execute("GRANT " + ProjectIdentity.AUTHENTICATED + " TO " + ident(authenticated));

            if (!superuser) {
                s.execute("GRANT " + ident(anon) + ", " + ident(authenticated) + " TO CURRENT_USER");
                s.execute("GRANT CREATE ON SCHEMA aura_rls TO " + ident(anon) + ", " + ident(authenticated));
            }
            for (String clientRole : List.of(ProjectIdentity.ANON, ProjectIdentity.AUTHENTICATED)) {
                String runner = id.runner(clientRole);
                String role = id.role(clientRole);
                s.execute("CREATE OR REPLACE FUNCTION " + runner
                        + String.format(RUNNER, ident(projectSchema), literal(role)));
                String signature = runner + "(text, text[])";
                s.execute("ALTER FUNCTION " + signature + " OWNER TO " + ident(role));
                s.execute("COMMENT ON FUNCTION " + signature + " IS NULL");
                s.execute("REVOKE ALL ON FUNCTION " + signature + " FROM PUBLIC");
                List<String> grantees = new ArrayList<>(List.of(role, id.login()));
                s.execute("GRANT EXECUTE ON FUNCTION " + signature + " TO " + ident(id.login()));
                if (tenantLogin != null) {
                    s.execute("GRANT EXECUTE ON FUNCTION " + signature + " TO " + ident(tenantLogin));
                    grantees.add(tenantLogin);
                }
                // and nobody else: grants a tenant's code committed before the confinement guard existed
                for (String other : otherGrantees(c, signature, grantees)) {
                    s.execute("REVOKE ALL ON FUNCTION " + signature + " FROM " + other + " CASCADE");
                }
            }
            if (!superuser) {
                s.execute("REVOKE CREATE ON SCHEMA aura_rls FROM " + ident(anon) + ", " + ident(authenticated));
                s.execute("REVOKE " + ident(anon) + ", " + ident(authenticated) + " FROM CURRENT_USER");
            }

            String shared = "PUBLIC, " + ProjectIdentity.ANON + ", " + ProjectIdentity.AUTHENTICATED;
            String own = ident(anon) + ", " + ident(authenticated);
            String rt = ident(realtimeSchema);
            for (String schema : List.of(ident(projectSchema), rt)) {
                s.execute("REVOKE ALL ON SCHEMA " + schema + " FROM " + shared);
                s.execute("GRANT USAGE ON SCHEMA " + schema + " TO " + own);
            }
            s.execute("REVOKE ALL ON " + rt + ".messages FROM " + shared);
            s.execute("GRANT SELECT, INSERT ON " + rt + ".messages TO " + own);
            String functions = rt + ".aura_probe(text), " + rt + ".aura_janitor(integer)";
            s.execute("REVOKE ALL ON FUNCTION " + functions + " FROM " + shared);
            s.execute("GRANT EXECUTE ON FUNCTION " + functions + " TO " + own);
        }
        c.unwrap(PGConnection.class).alterUserPassword(id.login(), loginPassword.toCharArray(), null);
    }

    /**
     * The grantees of {@code function} other than {@code keep}, quoted ({@code PUBLIC} as is). The
     * tenant login of another release on the same cluster keeps its grant only if it is in
     * {@code keep}; {@link #grantRunners} gives it back at that release's next pass.
     */
    private static List<String> otherGrantees(Connection c, String function, List<String> keep) throws SQLException {
        List<String> out = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT DISTINCT coalesce(quote_ident(r.rolname), 'PUBLIC') FROM pg_proc p
                 CROSS JOIN LATERAL aclexplode(p.proacl) a LEFT JOIN pg_roles r ON r.oid = a.grantee
                 WHERE p.oid = ?::regprocedure AND (r.rolname IS NULL OR r.rolname <> ALL (?))""")) {
            ps.setString(1, function);
            ps.setArray(2, c.createArrayOf("text", keep.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.add(rs.getString(1));
                }
            }
        }
        return out;
    }

    /** Sets the project login's password again (tenant code may change its own login's password). */
    static void repairLogin(Connection c, UUID project, String loginPassword) throws SQLException {
        ProjectIdentity id = ProjectIdentity.of(project);
        c.unwrap(PGConnection.class).alterUserPassword(id.login(), loginPassword.toCharArray(), null);
    }

    /** Grants {@code tenantLogin} every runner it cannot execute yet; returns how many. */
    static int grantRunners(Connection c, String tenantLogin) throws SQLException {
        List<String> missing = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT p.oid::regprocedure::text FROM pg_proc p
                 WHERE p.pronamespace = 'aura_rls'::regnamespace AND p.proname LIKE 'project\\_%'
                   AND NOT has_function_privilege(?, p.oid, 'EXECUTE')""")) {
            ps.setString(1, tenantLogin);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    missing.add(rs.getString(1));
                }
            }
        }
        try (Statement s = c.createStatement()) {
            for (String f : missing) {
                s.execute("GRANT EXECUTE ON FUNCTION " + f + " TO " + ident(tenantLogin));
            }
        }
        return missing.size();
    }

    /**
     * The projects whose schemas roles of other projects may use: {@code USAGE} granted to
     * {@code PUBLIC}, a shared client role or another project's role. Each row is
     * {@code project_id schema grantee}.
     */
    static List<String> exposed(Connection c) throws SQLException {
        List<String> out = new ArrayList<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("""
                        SELECT p.project_id::text, n.nspname, coalesce(g.rolname, 'PUBLIC')
                          FROM aura_platform.projects p
                          JOIN pg_namespace n ON n.nspname IN (p.schema_name,
                               'project_' || replace(p.project_id::text, '-', '_') || '_realtime')
                          CROSS JOIN LATERAL aclexplode(n.nspacl) a
                          LEFT JOIN pg_roles g ON g.oid = a.grantee
                         WHERE a.privilege_type = 'USAGE'
                           AND (a.grantee = 0 OR g.rolname IN ('aura_anon', 'aura_authenticated')
                                OR (g.rolname LIKE 'project\\_%' AND g.rolname NOT LIKE
                                    'project\\_' || replace(p.project_id::text, '-', '\\_') || '\\_%'))
                         ORDER BY 1, 2, 3""")) {
            while (rs.next()) {
                out.add(rs.getString(1) + " " + rs.getString(2) + " " + rs.getString(3));
            }
        }
        return out;
    }

    private static boolean superuser(Connection c) throws SQLException {
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    private static void create(Connection c, Statement s, String role, String attributes) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT 1 FROM pg_roles WHERE rolname = ?")) {
            ps.setString(1, role);
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next()) {
                    s.execute("CREATE ROLE " + ident(role) + " " + attributes);
                }
            }
        }
    }

    /**
     * Revokes from {@code role} every membership in a role not in {@code memberOf}, and every
     * member of {@code role} not in {@code members}.
     */
    private static void reconcile(Connection c, Statement s, String role, List<String> memberOf, List<String> members)
            throws SQLException {
        List<String> revokes = new ArrayList<>();
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT r.rolname, u.rolname FROM pg_auth_members m
                  JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member
                 WHERE (u.rolname = ? AND r.rolname <> ALL (?)) OR (r.rolname = ? AND u.rolname <> ALL (?))""")) {
            ps.setString(1, role);
            ps.setArray(2, c.createArrayOf("text", memberOf.toArray()));
            ps.setString(3, role);
            ps.setArray(4, c.createArrayOf("text", members.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    revokes.add("REVOKE " + ident(rs.getString(1)) + " FROM " + ident(rs.getString(2)));
                }
            }
        }
        for (String revoke : revokes) {
            s.execute(revoke);
        }
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    private static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
