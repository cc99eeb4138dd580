package dev.aura.realtime.cdc.tenant;

import com.zaxxer.hikari.HikariDataSource;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The safe tenant session: the pools for <em>tenant SQL</em>, every statement that evaluates SQL a
 * tenant wrote, i.e. RLS policies (read as the subscriber's role, {@code rls}), casts to a tenant's
 * column types (whose input functions and domain checks the tenant may define) and the
 * private-channel statements (both {@code join}), and the janitor ({@code upkeep}). Those packages
 * write their statements against a {@link RunnerSession}; they run only here. Platform SQL runs on
 * {@code catalog.PlatformDb}.
 *
 * <p>Each statement runs as a role of the project it concerns only (docs/design.md I,
 * {@code identity.ProjectIdentity}): on the shared tenant login, which has no privilege and no
 * membership ({@link TenantLoginCheck}), tenant code is reached only through one call of the
 * project's runner, a {@code SECURITY DEFINER} function owned by the project's role, inside which
 * Postgres refuses role changes; statements that commit run on the project's own login
 * ({@link ProjectLogins}).
 *
 * <p>Every use is one transaction (read-only by {@code default_transaction_read_only}, so
 * non-transactional side effects such as {@code setval} fail, unless a private-channel check must
 * insert) with {@code statement_timeout}, {@code lock_timeout} and the claims set locally, a
 * {@link Watchdog} for statements that catch their timeout, then a rollback and {@code DISCARD
 * ALL}, so nothing a tenant left in the session (advisory locks, temporary tables, prepared
 * statements, settings) reaches the next user of the connection.
 *
 * <p>Failures are classified without trusting what the tenant can raise: a timeout (ours, or the
 * watchdog's) is {@link Kind#TIMEOUT}; any other error is {@link Kind#ERROR} when the session (or,
 * if the tenant ended it, a fresh one) still answers {@code SELECT 1}, whatever its SQLSTATE, and
 * {@link Unavailable} only when Postgres itself does not answer. Tenant error text stays in
 * {@link Failure#tenantText} (for the log) and never enters an {@link Unavailable}.
 *
 * <p>The transaction's mechanics are {@link TenantSessions}. Thread-safe; every call takes its own
 * connection. Join-time casts use at most {@code joinConnections} of the pool, and the
 * private-channel statements as many ({@link #channelShare}), so they never starve the RLS checks.
 */
public final class TenantDb implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(TenantDb.class);
    /** Least time a statement gets beyond its timeout before the watchdog ends it. */
    private static final Duration GRACE = Duration.ofMillis(100);

    /**
     * @param url JDBC URL (its user and password are replaced by {@code user}/{@code password} when those are set)
     * @param user the login, or null to take the URL's
     * @param password its password, or null
     * @param statementTimeout {@code statement_timeout}
     * @param lateStatementTimeout the longest {@code statement_timeout} a caller may ask for: the
     *     late lane's checks (docs/design.md C14); every other statement runs with {@code statementTimeout}
     * @param lockTimeout {@code lock_timeout}
     * @param checkConnections connections for RLS checks (one per shard)
     * @param joinConnections connections join-time casts may use at most
     * @param checkoutTimeout how long a caller waits for a connection before Postgres counts as unavailable
     * @param clientRoles the only roles the login may be a member of
     * @param statusRecheck how often the login is verified again
     * @param projectLoginSecret the secret the project logins' passwords derive from ({@code AURA_JWT_SECRET})
     */
    public record Settings(
            String url,
            String user,
            String password,
            Duration statementTimeout,
            Duration lateStatementTimeout,
            Duration lockTimeout,
            int checkConnections,
            int joinConnections,
            Duration checkoutTimeout,
            List<String> clientRoles,
            Duration statusRecheck,
            String projectLoginSecret) {
        @Override
        public String toString() {
            return "TenantDb.Settings[user=" + user + ", statementTimeout=" + statementTimeout + "]";
        }
    }

    /** How a tenant statement failed. */
    public enum Kind {
        /** It raised (whatever SQLSTATE) and Postgres still answers. */
        ERROR,
        /** {@code statement_timeout}, {@code lock_timeout} or the watchdog ended it. */
        TIMEOUT
    }

    /** A tenant statement's failure; {@code tenantText} may contain tenant-authored text: logs only. */
    public record Failure(Kind kind, String sqlState, String tenantText) {}

    /** Postgres (or the tenant pool) did not answer: says nothing about any subscriber. */
    public static final class Unavailable extends Exception {
        Unavailable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Settings settings;
    private final HikariDataSource pool;
    private final HikariDataSource terminator;
    private final ScheduledExecutorService scheduler;
    private final TenantSessions sessions;
    private final ProjectLogins logins;
    private final ConnectionShare channelShare;
    private volatile TenantSqlStatus status;
    private volatile TenantSqlStatus missing;
    private volatile long verifiedAtNanos;

    private TenantDb(Settings settings) {
        this.settings = settings;
        // join-time casts (join.JoinCasts) and the channel share get joinConnections each
        this.pool = TenantSessions.pool(
                settings, "aura-cdc-tenant", settings.checkConnections() + 2 * settings.joinConnections() + 1);
        this.terminator = TenantSessions.pool(settings, "aura-cdc-tenant-watchdog", 1);
        this.scheduler = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("aura-tenant-watchdog").daemon().factory());
        Duration half = settings.statementTimeout().dividedBy(2);
        Watchdog watchdog = new Watchdog(scheduler, terminator, half.compareTo(GRACE) > 0 ? half : GRACE);
        Duration longest = settings.lateStatementTimeout().compareTo(settings.statementTimeout()) > 0
                ? settings.lateStatementTimeout()
                : settings.statementTimeout();
        this.sessions = new TenantSessions(pool, watchdog, longest, true, () -> {});
        this.logins = new ProjectLogins(
                settings,
                scheduler,
                half.compareTo(GRACE) > 0 ? half : GRACE,
                p -> ProjectIdentity.password(settings.projectLoginSecret(), p.login()));
        this.channelShare = new ConnectionShare(settings.joinConnections(), settings.checkoutTimeout());
        this.status = TenantSqlStatus.not(settings.user(), TenantSqlStatus.STARTING, "verifying the tenant login");
    }

    /**
     * Opens the pools and verifies the login now and every {@code statusRecheck}.
     *
     * @param missing null, or why there is no tenant login (the worker could not provision one and
     *     none was configured): tenant SQL then stays off until a restart
     */
    public static TenantDb open(Settings settings, String missing) {
        TenantDb db = new TenantDb(settings);
        if (missing != null) {
            db.missing = TenantSqlStatus.not(settings.user(), TenantSqlStatus.MISSING, missing);
            db.setStatus(db.missing);
            return db;
        }
        db.refreshStatus();
        db.scheduler.scheduleWithFixedDelay(db::recheck, 1, 1, TimeUnit.SECONDS);
        return db;
    }

    /**
     * The private-channel statements' share of the pool (docs/design.md H1, H2): the read, write,
     * replay and persist checks and the janitor take turns in it.
     */
    public ConnectionShare channelShare() {
        return channelShare;
    }

    /** How many connections the join-time casts may use at most (and the channel share has). */
    public int joinConnections() {
        return settings.joinConnections();
    }

    /** How long a caller waits for a connection before Postgres counts as unavailable. */
    public Duration checkoutTimeout() {
        return settings.checkoutTimeout();
    }

    /** Whether tenant SQL runs, and why not. */
    public TenantSqlStatus status() {
        return status;
    }

    /** Verifies the login every {@code statusRecheck}, and every second while it cannot connect. */
    private void recheck() {
        if (!status.usable()
                || System.nanoTime() - verifiedAtNanos
                        >= settings.statusRecheck().toNanos()) {
            refreshStatus();
        }
    }

    /** Verifies the login again. */
    public void refreshStatus() {
        verifiedAtNanos = System.nanoTime();
        if (missing != null) {
            return;
        }
        TenantSqlStatus next;
        Connection c = null;
        try {
            c = pool.getConnection();
            next = TenantLoginCheck.verify(c, settings.clientRoles());
            c.close();
        } catch (SQLException e) {
            if (c != null) {
                sessions.release(c, false); // a session that failed our own query is not reused
            }
            next = TenantSqlStatus.not(
                    status.login(),
                    TenantSqlStatus.UNAVAILABLE,
                    "the tenant login cannot connect or be verified: " + e.getMessage());
        }
        setStatus(next);
    }

    private synchronized void setStatus(TenantSqlStatus next) {
        TenantSqlStatus previous = status;
        status = next;
        if (next.usable() && !previous.usable()) {
            log.info("tenant SQL runs as login {} (no privilege beyond {})", next.login(), settings.clientRoles());
        } else if (!next.usable() && !next.reasonCode().equals(previous.reasonCode())) {
            log.warn("[TenantSqlDisabled] {}: {}", next.reasonCode(), next.reason());
        }
    }

    /**
     * Runs {@code body} in a transaction of the shared login ending as {@code mode} says (never a
     * commit), unless tenant SQL is off. {@code body} reaches tenant code only through runner calls.
     *
     * @throws RunnerSession.TenantFailure when tenant code raised or timed out (Postgres answers)
     * @throws Unavailable when Postgres did not answer
     */
    public <T> T session(
            String claims, String schema, Duration timeout, RunnerSession.Mode mode, RunnerSession.Body<T> body)
            throws Unavailable, RunnerSession.TenantFailure {
        if (status.off()) {
            throw new IllegalStateException("tenant SQL is off: " + status.reasonCode());
        }
        return sessions.run(null, claims, schema, timeout, mode, c -> body.run(TenantSessions.on(c)));
    }

    /**
     * Runs one project's checks in one transaction of the shared login, each in its savepoint
     * ({@link TenantSessions#runEach}), with the configured statement timeout.
     */
    public <R> List<RunnerSession.Outcome<R>> eachSession(
            String schema, RunnerSession.Mode mode, List<? extends RunnerSession.Item<R>> items, Duration slice)
            throws Unavailable {
        if (status.off()) {
            throw new IllegalStateException("tenant SQL is off: " + status.reasonCode());
        }
        return sessions.runEach(schema, settings.statementTimeout(), mode, items, slice);
    }

    /**
     * Runs {@code body} on the project's login, ending as {@code mode} says: the path of statements
     * that commit ({@link ProjectLogins#run}).
     */
    public <T> T projectSession(
            ProjectIdentity project, String claims, String schema, RunnerSession.Mode mode, RunnerSession.Body<T> body)
            throws Unavailable, RunnerSession.TenantFailure {
        if (status.off()) {
            throw new IllegalStateException("tenant SQL is off: " + status.reasonCode());
        }
        return logins.run(project, claims, schema, mode, body);
    }

    /** Called with a project id when its login's password was refused: the platform sets it again. */
    public void onProjectLoginRefused(java.util.function.Consumer<String> repair) {
        logins.onRefused(repair);
    }

    /** The configured {@code statement_timeout} of tenant statements. */
    public Duration statementTimeout() {
        return settings.statementTimeout();
    }

    @Override
    public void close() {
        scheduler.shutdownNow();
        logins.close();
        pool.close();
        terminator.close();
    }
}
