package dev.aura.realtime.cdc.tenant;

import com.zaxxer.hikari.HikariDataSource;
import dev.aura.realtime.cdc.identity.ConfinementGuard;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Consumer;
import java.util.function.Function;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Sessions of the project logins ({@link ProjectIdentity#login}, docs/design.md I), for the tenant
 * statements that commit: persisted broadcasts and the janitor. A committing transaction runs
 * deferred triggers at {@code COMMIT}, outside any security-definer context, as whoever the
 * session is: here that is a login that is a member of nothing and may only execute its project's
 * runners, so tenant code running there outside a runner can reach nothing (it may change this
 * login's own password: {@code refused} repairs it).
 *
 * <p>One small pool per project, opened on first use ({@value #PER_PROJECT} connections, closed
 * after a minute idle); at most {@value #MAX_POOLS} pools, the least recently used closed first.
 * A login whose password tenant code changed is repaired through {@code refused} and tried again.
 * Thread-safe.
 */
final class ProjectLogins implements AutoCloseable {
    static final int PER_PROJECT = 2;
    static final int MAX_POOLS = 64;

    private record Entry(HikariDataSource pool, TenantSessions sessions) {}

    private final TenantDb.Settings settings;
    private final ScheduledExecutorService scheduler;
    private final Duration grace;
    private final Function<ProjectIdentity, String> passwords;
    private final ConfinementGuard guard = ConfinementGuard.load();
    private volatile Consumer<String> refused = projectId -> {};
    private final LinkedHashMap<String, Entry> pools = new LinkedHashMap<>(16, 0.75f, true);
    private boolean closed;

    /** @param passwords each project login's password */
    ProjectLogins(
            TenantDb.Settings settings,
            ScheduledExecutorService scheduler,
            Duration grace,
            Function<ProjectIdentity, String> passwords) {
        this.settings = settings;
        this.scheduler = scheduler;
        this.grace = grace;
        this.passwords = passwords;
    }

    /** Called with a project id when its login's password was refused (the platform sets it again). */
    void onRefused(Consumer<String> repair) {
        this.refused = repair;
    }

    /** Tells the platform that {@code project}'s login was refused. */
    void refused(ProjectIdentity project) {
        refused.accept(project.projectId());
    }

    /** The sessions of {@code project}'s login. */
    synchronized TenantSessions sessions(ProjectIdentity project) {
        if (closed) {
            throw new IllegalStateException("closed");
        }
        Entry e = pools.get(project.projectId());
        if (e == null) {
            e = open(project);
            pools.put(project.projectId(), e);
            if (pools.size() > MAX_POOLS) {
                Map.Entry<String, Entry> eldest = pools.entrySet().iterator().next();
                pools.remove(eldest.getKey());
                eldest.getValue().pool().close();
            }
        }
        return e.sessions();
    }

    /**
     * Runs {@code body} on the project's login, ending as {@code mode} says. {@code body} reaches
     * tenant code through one call of the project's runner; a commit needs the confinement guard
     * in place and the runners as provisioned ({@link #beforeCommit}): the guard refuses every
     * edit of the runners, also by deferred triggers at {@code COMMIT}, which no check before the
     * commit could see.
     */
    <T> T run(
            ProjectIdentity project, String claims, String schema, RunnerSession.Mode mode, RunnerSession.Body<T> body)
            throws TenantDb.Unavailable, RunnerSession.TenantFailure {
        return sessions(project).run(null, claims, schema, settings.statementTimeout(), mode, c -> {
            T result = body.run(TenantSessions.on(c));
            if (mode == RunnerSession.Mode.WRITE_COMMIT) {
                // raised as a tenant error: the transaction is rolled back, the request denied
                String broken = beforeCommit(c, project, guard.body());
                if (broken != null) {
                    throw new SQLException(broken + "; not committed", "42501");
                }
            }
            return result;
        });
    }

    /**
     * Why the transaction must not commit, or null: the confinement guard is not in place (then a
     * deferred trigger firing at {@code COMMIT} could edit the runners unseen), or the project's
     * runners are no longer {@code SECURITY DEFINER} and owned by the project role they are named
     * after (which the guard refuses; checked again in case it was removed meanwhile). Every name
     * is qualified: tenant code inside the runner may have changed the session's
     * {@code search_path}.
     */
    static String beforeCommit(Connection c, ProjectIdentity project, String guardBody) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT (" + ConfinementGuard.IN_PLACE + "), (SELECT"
                + " pg_catalog.count(*) OPERATOR(pg_catalog.=) 2 AND COALESCE(pg_catalog.bool_and(p.prosecdef"
                + " AND p.proowner OPERATOR(pg_catalog.=) r.oid), false)"
                + " FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_roles r ON r.rolname OPERATOR(pg_catalog.=) p.proname"
                + " WHERE p.pronamespace OPERATOR(pg_catalog.=) 'aura_rls'::pg_catalog.regnamespace"
                + " AND p.proname OPERATOR(pg_catalog.=) ANY (?::pg_catalog.name[]))")) {
            ps.setString(1, guardBody);
            Object[] names = {project.role(ProjectIdentity.ANON), project.role(ProjectIdentity.AUTHENTICATED)};
            ps.setArray(2, c.createArrayOf("text", names));
            try (ResultSet rs = ps.executeQuery()) {
                if (!rs.next() || !rs.getBoolean(1)) {
                    return "the confinement guard is not in place (docs/security.md)";
                }
                return rs.getBoolean(2) ? null : "the project's runners were altered in this transaction";
            }
        }
    }

    private Entry open(ProjectIdentity project) {
        String password = passwords.apply(project);
        PGSimpleDataSource ds = TenantSessions.dataSource(settings, project.login(), password);
        HikariDataSource pool = TenantSessions.pool(ds, settings, "aura-cdc-" + project.base(), PER_PROJECT, true);
        // the watchdog's own session of the same login (a login may end its own backends), unpooled
        Watchdog watchdog =
                new Watchdog(scheduler, TenantSessions.dataSource(settings, project.login(), password), grace);
        return new Entry(
                pool, new TenantSessions(pool, watchdog, settings.statementTimeout(), false, () -> refused(project)));
    }

    @Override
    public synchronized void close() {
        closed = true;
        pools.values().forEach(e -> e.pool().close());
        pools.clear();
    }
}
