package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 36, point 4 (docs/security.md, "The confinement cannot be edited"): with a superuser
 * platform login the worker installs an event trigger that refuses every edit of a confining
 * object (a project's runners, the schemas {@code aura_rls}, {@code aura_platform}, {@code auth}
 * and their objects) by anyone but the platform: inside a runner, in a deferred trigger at
 * {@code COMMIT}, from the tenant's own session; tenant code cannot switch it off; the tenant's
 * DDL on its own objects goes on. A runner refuses to run as anyone but its role, and provisioning
 * restores a runner tampered with before the upgrade.
 *
 * <p>Before the fix (8c27465) every test here but {@link #theTenantsOwnDdlGoesOn} FAILS: the
 * runner's owner alters, re-grants and drops it, a deferred trigger does so at COMMIT, no event
 * trigger exists, an invoker runner runs the caller's query as the caller, and provisioning keeps
 * a tampered runner's grants.
 */
class ConfinementIT {
    private static final Duration T = Duration.ofSeconds(20);
    private static CdcFixture fx;
    private static ProjectIdentity id;
    private static String runner;

    @BeforeAll
    static void start() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of("CDC_TABLE_REFRESH_MS", "200"));
        fx.createProject();
        id = new ProjectIdentity(fx.projectId);
        runner = id.runner(ProjectIdentity.AUTHENTICATED) + "(text, text[])";
        awaitVersion(RealtimeSchemas.VERSION);
    }

    @AfterAll
    static void stop() throws Exception {
        fx.close();
    }

    private static void awaitVersion(int version) {
        Awaitility.await()
                .atMost(T)
                .until(() -> String.valueOf(version)
                        .equals(fx.queryOne("SELECT realtime_schema_version FROM aura_platform.projects"
                                + " WHERE project_id = '" + fx.projectId + "'")));
    }

    private static String q(String role) {
        return "\"" + role + "\"";
    }

    /** The project's runners as provisioned: name, schema, owner, security, settings, grants, body, comment. */
    private static String runners() {
        return fx.queryOne("SELECT string_agg(format('%s in %s owner=%s secdef=%s config=%s acl=%s src=%s comment=%s',"
                + " p.proname, p.pronamespace::regnamespace, p.proowner::regrole, p.prosecdef, p.proconfig, p.proacl,"
                + " md5(p.prosrc), obj_description(p.oid, 'pg_proc')), E'\\n' ORDER BY p.proname) FROM pg_proc p"
                + " WHERE p.proname LIKE '" + id.base() + "\\_%'");
    }

    /** Runs {@code sql} on one connection after {@code SET ROLE role}; returns the error of each statement (null: ran). */
    private static List<String> as(String role, String... sql) throws SQLException {
        List<String> errors = new ArrayList<>();
        try (Connection c = fx.pg.connect();
                Statement s = c.createStatement()) {
            s.execute("SET ROLE " + q(role));
            for (String each : sql) {
                try {
                    s.execute(each);
                    errors.add(null);
                } catch (SQLException e) {
                    errors.add(e.getSQLState() + " " + e.getMessage());
                }
            }
        }
        return errors;
    }

    @Test
    void theRunnersOwnerCanNeitherAlterNorReGrantNorDropIt() throws Exception {
        String role = id.role(ProjectIdentity.AUTHENTICATED);
        String before = runners();
        // the project's owner lets its roles create in its schema: a runner could be moved there
        fx.sql("GRANT CREATE ON SCHEMA \"" + fx.schema + "\" TO " + q(role));
        String tenantLogin = fx.slot + "_tenant";
        List<String> edits = List.of(
                "ALTER FUNCTION " + runner + " SECURITY INVOKER",
                "ALTER FUNCTION " + runner + " SET search_path = \"" + fx.schema + "\", pg_catalog",
                "ALTER FUNCTION " + runner + " RESET ALL",
                "ALTER FUNCTION " + runner + " COST 1",
                "COMMENT ON FUNCTION " + runner + " IS 'edited'",
                "GRANT EXECUTE ON FUNCTION " + runner + " TO PUBLIC",
                "REVOKE EXECUTE ON FUNCTION " + runner + " FROM " + q(tenantLogin),
                "ALTER FUNCTION " + runner + " SET SCHEMA \"" + fx.schema + "\"",
                "DROP FUNCTION " + runner,
                "DROP OWNED BY CURRENT_USER");
        List<String> errors = as(role, edits.toArray(String[]::new));
        for (int i = 0; i < edits.size(); i++) {
            assertThat(errors.get(i)).as(edits.get(i)).isNotNull().startsWith("42501");
        }
        // what Postgres alone would let the owner do is refused by the platform's guard
        for (int i = 0; i < 9; i++) {
            assertThat(errors.get(i)).as(edits.get(i)).contains("ConfinementGuard");
        }
        // nor can a role holding its privileges (a GRANT names no object to an event trigger)
        String member =
                "member_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        fx.sql("CREATE ROLE " + member + " NOLOGIN IN ROLE " + q(role));
        try {
            assertThat(as(member, "GRANT EXECUTE ON FUNCTION " + runner + " TO PUBLIC")
                            .get(0))
                    .contains("ConfinementGuard");
        } finally {
            fx.sql("DROP ROLE " + member);
        }
        assertThat(runners()).isEqualTo(before);
    }

    @Test
    void aDeferredTriggerCannotEditTheRunnerAtCommit() throws Exception {
        String rt = "\"" + RealtimeSchemas.nameOf(fx.projectId) + "\"";
        String before = runners();
        fx.sql(
                "CREATE FUNCTION \"" + fx.schema + "\".make_invoker() RETURNS boolean LANGUAGE plpgsql AS $f$ BEGIN"
                        + " EXECUTE 'ALTER FUNCTION " + runner.replace("'", "''") + " SECURITY INVOKER'; RETURN true;"
                        + " END $f$",
                "CREATE FUNCTION \"" + fx.schema + "\".at_commit() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN"
                        + " PERFORM * FROM " + id.runner(ProjectIdentity.AUTHENTICATED) + "('SELECT ARRAY[\""
                        + fx.schema + "\".make_invoker()::text]', '{}'); RETURN NULL; END $f$",
                "CREATE CONSTRAINT TRIGGER make_invoker AFTER INSERT ON " + rt + ".messages DEFERRABLE INITIALLY"
                        + " DEFERRED FOR EACH ROW WHEN (NEW.event = 'at-commit') EXECUTE FUNCTION \"" + fx.schema
                        + "\".at_commit()",
                "CREATE POLICY anyone_writes ON " + rt
                        + ".messages FOR INSERT TO aura_authenticated WITH CHECK (true)");
        // the worker's persist, as the project login: one runner call, then COMMIT
        try (Connection c = fx.pg.connect();
                Statement s = c.createStatement()) {
            s.execute("SET ROLE " + q(id.login()));
            c.setAutoCommit(false);
            s.execute("SELECT * FROM " + id.runner(ProjectIdentity.AUTHENTICATED) + "('WITH w AS (INSERT INTO " + rt
                    + ".messages(topic, extension, private, event) VALUES (''t'', ''broadcast'', true, ''at-commit''))"
                    + " SELECT ARRAY[''ok'']', '{}')");
            assertThatThrownBy(c::commit)
                    .isInstanceOfSatisfying(
                            SQLException.class, e -> assertThat(e.getMessage()).contains("ConfinementGuard"));
        }
        assertThat(runners()).isEqualTo(before);
        assertThat(fx.queryOne("SELECT count(*) FROM " + rt + ".messages WHERE event = 'at-commit'"))
                .isEqualTo("0");
    }

    @Test
    void tenantCodeCannotSwitchTheGuardOff() throws Exception {
        String guards =
                "SELECT string_agg(evtname || ' ' || evtevent || ' ' || evtenabled::text || ' ' || evtfoid::regproc,"
                        + " ', ' ORDER BY evtname) FROM pg_event_trigger";
        String before = fx.queryOne(guards);
        assertThat(before)
                .isEqualTo("aura_confinement_ddl ddl_command_end A aura_platform.confinement_guard,"
                        + " aura_confinement_drop sql_drop A aura_platform.confinement_guard");
        String guardFunction = "aura_platform.confinement_guard()";
        for (String role : List.of(id.role(ProjectIdentity.AUTHENTICATED), id.login())) {
            List<String> errors = as(
                    role,
                    "ALTER EVENT TRIGGER aura_confinement_ddl DISABLE",
                    "ALTER EVENT TRIGGER aura_confinement_drop OWNER TO CURRENT_USER",
                    "DROP EVENT TRIGGER aura_confinement_drop",
                    "SET session_replication_role = replica",
                    "SELECT set_config('session_replication_role', 'replica', false)",
                    "ALTER FUNCTION " + guardFunction + " RENAME TO edited",
                    "CREATE OR REPLACE FUNCTION " + guardFunction
                            + " RETURNS event_trigger LANGUAGE plpgsql AS $f$ BEGIN END $f$",
                    "ALTER FUNCTION " + runner + " SECURITY INVOKER");
            assertThat(errors).as("as " + role).doesNotContainNull();
        }
        assertThat(fx.queryOne(guards)).isEqualTo(before);
    }

    @Test
    void theTenantsOwnDdlGoesOn() throws Exception {
        String owner = "tenant_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
        String schema = owner + "_s";
        fx.sql(
                "CREATE ROLE " + owner + " NOLOGIN",
                "CREATE SCHEMA " + schema + " AUTHORIZATION " + owner,
                "GRANT USAGE ON SCHEMA auth TO " + owner);
        List<String> errors = as(
                owner,
                "CREATE TABLE " + schema + ".t(id int PRIMARY KEY, body text)",
                "GRANT SELECT ON " + schema + ".t TO aura_anon, aura_authenticated",
                "REVOKE SELECT ON " + schema + ".t FROM aura_anon",
                "ALTER TABLE " + schema + ".t ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY p ON " + schema + ".t FOR SELECT USING (auth.uid() IS NOT NULL)",
                "CREATE FUNCTION " + schema + ".f() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN RETURN NEW; END $f$",
                "ALTER FUNCTION " + schema + ".f() SECURITY DEFINER",
                "COMMENT ON FUNCTION " + schema + ".f() IS 'mine'",
                "CREATE TRIGGER tr BEFORE INSERT ON " + schema + ".t FOR EACH ROW EXECUTE FUNCTION " + schema + ".f()",
                "GRANT USAGE ON SCHEMA " + schema + " TO aura_authenticated",
                "CREATE TEMP TABLE scratch(x int)",
                "DROP TRIGGER tr ON " + schema + ".t",
                "DROP FUNCTION " + schema + ".f()",
                "DROP TABLE " + schema + ".t");
        assertThat(errors).containsOnlyNulls();
    }

    @Test
    void aRunnerRefusesToRunAsAnyoneButItsRole() throws Exception {
        String tenantLogin = fx.slot + "_tenant";
        String anonRunner = id.runner(ProjectIdentity.ANON) + "(text, text[])";
        // as if its owner had made it SECURITY INVOKER: the platform (superuser) can
        fx.sql("ALTER FUNCTION " + anonRunner + " SECURITY INVOKER");
        try {
            List<String> errors = as(
                    tenantLogin,
                    "SELECT * FROM " + id.runner(ProjectIdentity.ANON) + "('SELECT ARRAY[current_user::text]', '{}')");
            assertThat(errors.get(0)).startsWith("42501").contains("does not run as");
        } finally {
            fx.sql("ALTER FUNCTION " + anonRunner + " SECURITY DEFINER");
        }
    }

    @Test
    void provisioningAgainRestoresARunnerTamperedWithBeforeTheUpgrade() throws Exception {
        String anonRunner = id.runner(ProjectIdentity.ANON) + "(text, text[])";
        String before = runners();
        // what an older build let tenant code commit, done here by the superuser
        fx.sql(
                "ALTER FUNCTION " + anonRunner + " SECURITY INVOKER",
                "ALTER FUNCTION " + anonRunner + " SET search_path = \"" + fx.schema + "\", pg_catalog",
                "GRANT EXECUTE ON FUNCTION " + anonRunner + " TO PUBLIC",
                "GRANT EXECUTE ON FUNCTION " + anonRunner + " TO aura_anon WITH GRANT OPTION",
                "COMMENT ON FUNCTION " + anonRunner + " IS 'edited'",
                "UPDATE aura_platform.projects SET realtime_schema_version = 4 WHERE project_id = '" + fx.projectId
                        + "'");
        assertThat(runners()).isNotEqualTo(before);
        awaitVersion(RealtimeSchemas.VERSION);
        assertThat(runners()).isEqualTo(before);
        // and again: idempotent
        fx.sql("UPDATE aura_platform.projects SET realtime_schema_version = 4 WHERE project_id = '" + fx.projectId
                + "'");
        awaitVersion(RealtimeSchemas.VERSION);
        assertThat(runners()).isEqualTo(before);
        assertThat(fx.queryOne("SELECT prosrc FROM pg_proc WHERE oid = '" + anonRunner + "'::regprocedure"))
                .contains("does not run as");
    }
}
