package dev.aura.realtime.cdc.tenant;

import com.zaxxer.hikari.HikariDataSource;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
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
