package dev.aura.realtime.cdc.provision;

import dev.aura.realtime.cdc.catalog.PlatformDb;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each project's realtime schema (docs/design.md H1, H2): Supabase's {@code realtime} schema mapped
 * like {@code public} is. Project {@code <uuid>} with schema {@code project_<uuid>} gets
 * {@code project_<uuid>_realtime} (dashes as underscores; always 53 bytes, derived from the
 * project id alone), holding:
 *
 * <ul>
 *   <li>{@code messages}: Supabase's columns ({@code topic, extension, payload, event, private,
 *       updated_at, inserted_at, id}) plus {@code seq}, an identity column that orders a
 *       transaction's messages as they were inserted (replay order), and {@code expires_at}, set
 *       for a message persisted with {@code persist: {ttl}} (null otherwise); row level security
 *       on, so private channels are closed until the tenant writes policies;
 *   <li>{@code topic()}: the channel topic of the check in progress ({@code realtime.topic});
 *   <li>{@code send(payload, event, topic, private default true)},
 *       {@code send_binary(payload bytea, event, topic, private default true)} (stored in
 *       {@code binary_payload}, which excludes {@code payload}) and the trigger helper
 *       {@code broadcast_changes(topic, event, operation, table, schema, new, old, level)}, which
 *       reports the project's own schema as {@code public};
 *   <li>{@code aura_probe(topic)}: inserts the read check's probe rows (SECURITY DEFINER, so the
 *       check needs no insert policy; the check's transaction is always rolled back). Tenant code
 *       may call any project's probe too, so probe rows can never be committed: the deferred
 *       constraint trigger {@code aura_probe_guard} fails any transaction that would commit one
 *       (event {@value #PROBE_EVENT} is reserved);
 *   <li>{@code aura_janitor(max_rows)}: deletes messages older than the retention or past their
 *       {@code expires_at}, at most
 *       {@code max_rows} (capped at {@link #JANITOR_MAX_BATCH}) a call (SECURITY DEFINER; whoever
 *       calls it can only delete what has expired anyway). The retention is not a parameter: it
 *       comes from {@code aura_rls.messages_retention()}, which the worker rewrites at start from
 *       {@code CDC_MESSAGES_RETENTION_HOURS}, so tenant code cannot shorten another project's.
 * </ul>
 *
 * <p><b>Ownership.</b> Everything is created by the platform login in one transaction with
 * {@code search_path = pg_catalog}, then handed to the owner of the project's schema: the tenant
 * owns its messages table as it owns its tables, so its policies ({@code CREATE POLICY} needs
 * ownership) and triggers work as in Supabase. Consequently the platform login never writes to,
 * reads from or calls anything in a realtime schema after creating it: every later statement
 * (checks, replay, persist, janitor) runs as the project's own roles, where tenant code gains
 * nothing (docs/security.md). The project's roles ({@link ProjectIdentities}, provisioned in the
 * same transaction) get {@code USAGE}, {@code SELECT} and {@code INSERT} (write checks and
 * persisted broadcasts insert under the subscriber's role; the insert policy decides); the shared
 * client roles get nothing here. Version 2 added the identity, version 3 {@code binary_payload}
 * and {@code send_binary}, version 4 {@code expires_at}, version 5 runners that refuse to run as
 * anyone but their role, with their grants, settings and comment reset to what is provisioned
 * (what tenant code could commit before the confinement guard); an older project is provisioned
 * again (idempotent) at the next pass.
 *
 * <p>Provisioned once per project and {@link #VERSION} (recorded in
 * {@code aura_platform.projects.realtime_schema_version}), under an advisory lock; a project whose
 * schema does not exist yet, or whose owner the platform login may not hand objects to, is retried
 * at the next call ({@code [RealtimeSchemaFailed]}).
 */
public final class RealtimeSchemas {
    private static final Logger log = LoggerFactory.getLogger(RealtimeSchemas.class);
    /** The layout version; a project below it is (re)provisioned. */
    public static final int VERSION = 5;
    /** Rows one janitor call deletes at most, whatever its caller asks, so one call never holds a long transaction. */
    public static final int JANITOR_MAX_BATCH = 10_000;
    /** The {@code event} of the read check's probe rows; a row with it can never be committed. */
    public static final String PROBE_EVENT = "aura_read_check";

    private final PlatformDb db;
    private final Duration retention;
    private final String sharedSecret;
    private final Supplier<String> tenantLogin;
    private final AtomicBoolean retentionApplied = new AtomicBoolean();
    private final Set<UUID> ready = ConcurrentHashMap.newKeySet();
    private final Map<UUID, Long> repairedAtNanos = new ConcurrentHashMap<>();
    private final Map<UUID, Long> notReadyUntilNanos = new ConcurrentHashMap<>();
    private volatile List<String> exposed = List.of();
    private final Confinement confinement;

    /**
     * @param retention how long messages are kept ({@code CDC_MESSAGES_RETENTION_HOURS})
     * @param sharedSecret {@code AURA_JWT_SECRET}, from which the project logins' passwords derive
     * @param tenantLogin the shared tenant login once known (it executes the runners), else null
     */
    public RealtimeSchemas(PlatformDb db, Duration retention, String sharedSecret, Supplier<String> tenantLogin) {
        this.db = db;
        this.retention = retention;
        this.sharedSecret = sharedSecret;
        this.tenantLogin = tenantLogin;
        this.confinement = new Confinement(db);
    }

    /** Whether the confinement guard is in place, so statements that commit tenant code may run. */
    public Confinement confinement() {
        return confinement;
    }

    /**
     * Whether the project's schemas and identity are in place ({@link #VERSION}), provisioning
     * them now if not; cached once true. Every path that runs the project's code asks first.
     */
    public boolean ready(UUID project) {
        if (ready.contains(project)) {
            return true;
        }
        // a project that cannot be provisioned is asked again at most every 5 s, not per change
        Long until = notReadyUntilNanos.get(project);
        if (until != null && System.nanoTime() - until < 0) {
            return false;
        }
        boolean ok;
        try {
            ok = ensure(project);
        } catch (SQLException e) {
            log.warn("[RealtimeSchemaFailed] project {}: {}", project, e.getMessage());
            ok = false;
        }
        if (ok) {
            notReadyUntilNanos.remove(project);
        } else {
            if (notReadyUntilNanos.size() > 10_000) {
                notReadyUntilNanos.clear(); // a bound; entries are only a rate limit
            }
            notReadyUntilNanos.put(
                    project, System.nanoTime() + Duration.ofSeconds(5).toNanos());
        }
        return ok;
    }

    /** {@link #ready(UUID)} by the project's id text. */
    public boolean ready(String projectId) {
        return ready(UUID.fromString(projectId));
    }

    /**
     * Sets the project login's password again, at most once per 10 s per project: tenant code
     * running on that login may change its own password (docs/security.md), which locks out only
     * its own project until this runs.
     */
    public void repairLogin(String projectId) {
        UUID project = UUID.fromString(projectId);
        long now = System.nanoTime();
        Long last = repairedAtNanos.get(project);
        if (last != null && now - last < Duration.ofSeconds(10).toNanos()) {
            return;
        }
        repairedAtNanos.put(project, now);
        try (Connection c = db.connection()) {
            ProjectIdentities.repairLogin(c, project, loginPassword(project));
            log.warn("[ProjectLoginRepaired] project {}: its login's password was changed; it is set again", project);
        } catch (SQLException e) {
            log.warn(
                    "[ProjectLoginRepaired] project {}: could not set its login's password: {}",
                    project,
                    e.getMessage());
        }
    }

    /** The password of a project's login. */
    public String loginPassword(UUID project) {
        String login = ProjectIdentity.of(project).login();
        return ProjectIdentity.password(sharedSecret, login);
    }

    /**
     * The project schemas roles of other projects may use ({@code project_id schema grantee}), as
     * of the last {@link #audit}; empty when none.
     */
    public List<String> exposed() {
        return exposed;
    }

    /**
     * Grants the tenant login the runners it lacks, finds the project schemas usable by roles of
     * other projects ({@code [ProjectSchemaShared]}, {@code /health} {@code tenant_sql.exposed_projects})
     * and looks at the confinement guard again ({@link Confinement#refresh}).
     */
    public void audit() throws SQLException {
        confinement.refresh();
        try (Connection c = db.connection()) {
            String login = tenantLogin.get();
            if (login != null) {
                int granted = ProjectIdentities.grantRunners(c, login);
                if (granted > 0) {
                    log.info("tenant login {} may execute {} more project runners", login, granted);
                }
            }
            List<String> now = List.copyOf(ProjectIdentities.exposed(c));
            for (String e : now) {
                if (!exposed.contains(e)) {
                    log.warn(
                            "[ProjectSchemaShared] {} (project, schema, grantee): roles of other projects may use this"
                                    + " project's schema; REVOKE USAGE from that grantee (docs/security.md)",
                            e);
                }
            }
            exposed = now;
        }
    }

    /**
     * Writes the retention into {@code aura_rls.messages_retention()}, which every project's
     * {@code aura_janitor} reads. Every replica writes it at start: keep
     * {@code CDC_MESSAGES_RETENTION_HOURS} equal on all of them (the last started wins).
     */
    public void applyRetention() throws SQLException {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(" + (PlatformSchema.LOCK_KEY + 1) + ")");
                s.execute("CREATE OR REPLACE FUNCTION aura_rls.messages_retention() RETURNS interval"
                        + " LANGUAGE sql IMMUTABLE AS $$ SELECT interval '" + retention.toSeconds() + " seconds' $$");
                // the janitor runs as each project's owner: it must see this function, and nothing
                // else of aura_rls (the check functions stay revoked from PUBLIC)
                s.execute("GRANT USAGE ON SCHEMA aura_rls TO PUBLIC");
                s.execute("GRANT EXECUTE ON FUNCTION aura_rls.messages_retention() TO PUBLIC");
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            }
        }
        retentionApplied.set(true);
        log.info("messages are kept {} hours (aura_rls.messages_retention)", retention.toHours());
    }

    /** The realtime schema of a project: {@code project_<uuid with underscores>_realtime}. */
    public static String nameOf(String projectId) {
        return "project_" + projectId.toLowerCase(Locale.ROOT).replace('-', '_') + "_realtime";
    }

    /** Whether {@code schema} is the realtime schema of {@code projectId}. */
    public static boolean isRealtimeSchema(String projectId, String schema) {
        return schema.endsWith("_realtime") && schema.equals(nameOf(projectId));
    }

    /** A project whose realtime schema is provisioned: its id and schema. */
    public record Provisioned(String projectId, String schema) {}

    /** Every project whose realtime schema is provisioned (at {@link #VERSION}). */
    public List<Provisioned> provisioned() throws SQLException {
        List<Provisioned> out = new ArrayList<>();
        try (Connection c = db.connection();
                PreparedStatement ps =
                        c.prepareStatement("SELECT project_id::text, schema_name FROM aura_platform.projects"
                                + " WHERE realtime_schema_version >= " + VERSION + " ORDER BY 1");
                ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(new Provisioned(rs.getString(1), rs.getString(2)));
            }
        }
        return out;
    }

    /**
     * Provisions every project below {@link #VERSION} (and the retention, until it is in place);
     * returns how many projects were provisioned.
     */
    public int ensureAll() throws SQLException {
        if (!retentionApplied.get()) {
            applyRetention();
        }
        List<UUID> pending = new ArrayList<>();
        try (Connection c = db.connection();
                PreparedStatement ps = c.prepareStatement(
                        "SELECT project_id FROM aura_platform.projects WHERE realtime_schema_version < ?")) {
            ps.setInt(1, VERSION);
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    pending.add(rs.getObject(1, UUID.class));
                }
            }
        }
        int done = 0;
        for (UUID project : pending) {
            if (ensure(project)) {
                done++;
            }
        }
        return done;
    }

    /**
     * Provisions one project's realtime schema unless it is at {@link #VERSION}.
     *
     * @return whether it is in place now
     */
    public boolean ensure(UUID project) throws SQLException {
        try (Connection c = db.connection()) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("SELECT pg_advisory_xact_lock(" + (PlatformSchema.LOCK_KEY + 1) + ")");
                s.execute("SET LOCAL search_path = pg_catalog");
                String rt = nameOf(project.toString());
                String schema;
                String owner;
                int version;
                String existingOwner;
                try (PreparedStatement ps = c.prepareStatement("""
                        SELECT p.schema_name, p.realtime_schema_version, n.nspowner::regrole::text,
                               (SELECT r.nspowner::regrole::text FROM pg_namespace r WHERE r.nspname = ?)
                          FROM aura_platform.projects p LEFT JOIN pg_namespace n ON n.nspname = p.schema_name
                         WHERE p.project_id = ?""")) {
                    ps.setString(1, rt);
                    ps.setObject(2, project);
                    try (ResultSet rs = ps.executeQuery()) {
                        if (!rs.next()) {
                            c.rollback();
                            return false;
                        }
                        schema = rs.getString(1);
                        version = rs.getInt(2);
                        owner = rs.getString(3);
                        existingOwner = rs.getString(4);
                    }
                }
                if (version >= VERSION) {
                    c.rollback();
                    ready.add(project);
                    return true;
                }
                if (owner == null) {
                    c.rollback();
                    log.warn(
                            "[RealtimeSchemaFailed] project {}: its schema {} does not exist yet; its realtime schema is created once it does",
                            project,
                            schema);
                    return false;
                }
                if (existingOwner != null && !existingOwner.equals(owner)) {
                    // someone else created the name first: its objects are not ours to adopt
                    c.rollback();
                    log.warn(
                            "[RealtimeSchemaFailed] project {}: schema {} already exists, owned by {} and not by {} (the owner of {});"
                                    + " drop or rename it to let the worker create it",
                            project,
                            rt,
                            existingOwner,
                            owner,
                            schema);
                    return false;
                }
                for (String sql : RealtimeSchemaDdl.statements(ident(rt), literal(schema), owner)) {
                    s.execute(sql);
                }
                ProjectIdentities.ensure(c, project, schema, rt, tenantLogin.get(), loginPassword(project));
                try (PreparedStatement ps = c.prepareStatement(
                        "UPDATE aura_platform.projects SET realtime_schema_version = ? WHERE project_id = ?")) {
                    ps.setInt(1, VERSION);
                    ps.setObject(2, project);
                    ps.executeUpdate();
                }
                c.commit();
                ready.add(project);
                log.info(
                        "realtime schema {} and identity {} of project {} are in place (version {}), owned by {}",
                        rt,
                        ProjectIdentity.of(project).base(),
                        project,
                        VERSION,
                        owner);
                return true;
            } catch (SQLException e) {
                c.rollback();
                log.warn("[RealtimeSchemaFailed] project {}: {}", project, e.getMessage());
                return false;
            }
        }
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    private static String literal(String text) {
        return "'" + text.replace("'", "''") + "'";
    }
}
