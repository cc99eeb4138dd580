package dev.aura.realtime.cdc.tenant;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.SQLExceptionOverride;
import dev.aura.realtime.cdc.tenant.RunnerSession.Item;
import dev.aura.realtime.cdc.tenant.RunnerSession.Mode;
import dev.aura.realtime.cdc.tenant.RunnerSession.Outcome;
import dev.aura.realtime.cdc.tenant.RunnerSession.TenantFailure;
import dev.aura.realtime.cdc.tenant.TenantDb.Failure;
import dev.aura.realtime.cdc.tenant.TenantDb.Kind;
import dev.aura.realtime.cdc.tenant.TenantDb.Unavailable;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGConnection;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The mechanics of one tenant transaction for {@link TenantDb}: a connection set up for tenant
 * code, the {@link Watchdog}, the classification of a failure by probing (never by its SQLSTATE),
 * and the reset before the connection goes back to the pool. Also builds the pools, so every
 * connection of the tenant login carries the same options. Thread-safe.
 */
final class TenantSessions {
    private static final String SETUP = "SELECT set_config('role', ?, true), set_config('request.jwt.claims', ?, true),"
            + " set_config('search_path', ?, true), set_config('statement_timeout', ?, true)";
    /** A {@link #runEach} item's own savepoint, claims and topic (our SQL only, no tenant code). */
    private static final String ITEM_SETUP = "SAVEPOINT aura_check; SELECT pg_catalog.set_config('request.jwt.claims',"
            + " ?, true), pg_catalog.set_config('realtime.topic', ?, true)";

    /** Work on the connection itself: this package's own statements around the tenant's (the commit check). */
    @FunctionalInterface
    interface OnConnection<T> {
        T run(Connection c) throws SQLException;
    }

    private final HikariDataSource pool;
    private final Watchdog watchdog;
    private final Duration statementTimeout;
    private final boolean shared;
    private final Runnable refused;

    /**
     * @param shared whether {@code pool} is the shared tenant login's: its transactions never commit
     *     (tenant code reaches it only through a project's runner, docs/design.md I) and set no role
     * @param refused called when Postgres refuses the login's password (28P01)
     */
    TenantSessions(
            HikariDataSource pool, Watchdog watchdog, Duration statementTimeout, boolean shared, Runnable refused) {
        this.pool = pool;
        this.watchdog = watchdog;
        this.statementTimeout = statementTimeout;
        this.shared = shared;
        this.refused = refused;
    }

    /**
     * One tenant transaction: setup, {@code body}, then classification of any failure, then
     * cleanup; it ends as {@code mode} says.
     */
    <T> T run(String pgRole, String claims, String schema, Duration timeout, Mode mode, OnConnection<T> body)
            throws Unavailable, TenantFailure {
        if (shared && (mode == Mode.WRITE_COMMIT || pgRole != null)) {
            throw new IllegalArgumentException("the shared tenant login neither commits nor takes a role");
        }
        Duration limit = timeout.compareTo(statementTimeout) < 0 ? timeout : statementTimeout;
        Connection c = prepared(pgRole, claims, schema, limit, mode != Mode.READ_ONLY);
        Watchdog.Guard guard = null;
        boolean usable = true;
        try {
            guard = watchdog.watch(c.unwrap(PGConnection.class).getBackendPID(), limit);
            T result = body.run(c);
            if (mode == Mode.WRITE_COMMIT) {
                c.commit(); // deferred triggers run here: their failure is classified like any other
            }
            return result;
        } catch (SQLException e) {
            boolean fired = guard != null && guard.fired();
            String state = e.getSQLState();
            if (fired || "57014".equals(state) || "55P03".equals(state)) {
                usable = !fired;
                throw new TenantFailure(new Failure(Kind.TIMEOUT, state, e.getMessage()));
            }
            if (answers(c)) {
                throw new TenantFailure(new Failure(Kind.ERROR, state, e.getMessage()));
            }
            usable = false;
            pool.evictConnection(c);
            if (freshSessionAnswers()) {
                // the session ended but Postgres answers: tenant code ended it (or it broke alone)
                throw new TenantFailure(new Failure(Kind.ERROR, state, "session ended: " + e.getMessage()));
            }
            throw new Unavailable("Postgres does not answer the tenant login (SQLState " + state + ")", null);
        } finally {
            if (guard != null) {
                guard.close();
                usable &= !guard.fired();
            }
            release(c, usable);
        }
    }

    /**
     * Runs many checks of one project in one transaction of the shared login, each inside its own
     * {@code SAVEPOINT} with its own claims, topic, {@code statement_timeout} and {@link Watchdog}
     * guard, and each rolled back to its savepoint before the next: whatever tenant code did in one
     * (settings, rows, DDL such as an {@code ALTER FUNCTION} of its runner) is undone before the next
     * runs, exactly as one call per transaction, and one check that raises or times out fails alone.
     * A check whose backend the watchdog ended (or tenant code ended) fails alone too; the rest run
     * on a fresh session. Items must be one project's (one runner owner): the batch shares a session.
     *
     * @param slice null, or how long the batch may start new items: once it has run for that long,
     *     the outcomes so far are returned (at least one), and the caller queues the rest again
     * @return the outcomes of the first items, in order: all of them unless {@code slice} ran out
     * @throws Unavailable when Postgres does not answer (the items without an outcome yet)
     */
    <R> List<Outcome<R>> runEach(
            String schema, Duration timeout, Mode mode, List<? extends Item<R>> items, Duration slice)
            throws Unavailable {
        if (mode == Mode.WRITE_COMMIT) {
            throw new IllegalArgumentException("a batch of checks never commits");
        }
        Duration limit = timeout.compareTo(statementTimeout) < 0 ? timeout : statementTimeout;
        List<Outcome<R>> out = new ArrayList<>(items.size());
        int broken = 0;
        long start = System.nanoTime();
        long sliceNanos = slice == null ? Long.MAX_VALUE : slice.toNanos();
        while (out.size() < items.size() && (out.isEmpty() || System.nanoTime() - start < sliceNanos)) {
            Connection c = prepared(null, "{}", schema, limit, mode != Mode.READ_ONLY);
            boolean usable = true;
            try {
                int pid = c.unwrap(PGConnection.class).getBackendPID();
                while (usable
                        && out.size() < items.size()
                        && (out.isEmpty() || System.nanoTime() - start < sliceNanos)) {
                    Item<R> item = items.get(out.size());
                    try (PreparedStatement ps = c.prepareStatement(ITEM_SETUP)) {
                        ps.setString(1, item.claims());
                        ps.setString(2, item.topic() == null ? "" : item.topic());
                        ps.execute();
                    }
                    Watchdog.Guard guard = watchdog.watch(pid, limit);
                    Outcome<R> outcome;
                    try {
                        outcome = new Outcome<>(item.run(on(c)), null);
                    } catch (SQLException e) {
                        outcome = null;
                        String state = e.getSQLState();
                        if (guard.fired() || "57014".equals(state) || "55P03".equals(state)) {
                            usable = !guard.fired();
                            outcome = new Outcome<>(null, new Failure(Kind.TIMEOUT, state, e.getMessage()));
                        } else if (rolledBack(c)) {
                            outcome = new Outcome<>(null, new Failure(Kind.ERROR, state, e.getMessage()));
                        } else {
                            usable = false;
                            pool.evictConnection(c);
                            if (!freshSessionAnswers()) {
                                throw new Unavailable(
                                        "Postgres does not answer the tenant login (SQLState " + state + ")", null);
                            }
                            outcome = new Outcome<>(
                                    null, new Failure(Kind.ERROR, state, "session ended: " + e.getMessage()));
                        }
                    } finally {
                        guard.close();
                        usable &= !guard.fired();
                    }
                    out.add(outcome);
                    if (usable && !rolledBack(c)) {
                        usable = false; // the savepoint is gone: nothing more runs on this session
                    }
                }
            } catch (SQLException e) {
                // our own statements failed: the session broke between checks
                usable = false;
                if (++broken > 1 || !freshSessionAnswers()) {
                    throw new Unavailable("the tenant login's session broke: " + e.getMessage(), e);
                }
            } finally {
                release(c, usable);
            }
        }
        return out;
    }

    /** The session the work inside a transaction on {@code c} sees: runner calls and the topic, nothing else. */
    static RunnerSession on(Connection c) {
        return new RunnerSession() {
            @Override
            public List<String[]> viaRunner(String runner, String query, Object[] args) throws SQLException {
                List<String[]> rows = new ArrayList<>();
                try (PreparedStatement ps = c.prepareStatement("SELECT r FROM " + runner + "(?, ?::text[]) AS r")) {
                    ps.setString(1, query);
                    ps.setArray(2, c.createArrayOf("text", args));
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            java.sql.Array a = rs.getArray(1);
                            rows.add(a == null ? new String[0] : (String[]) a.getArray());
                        }
                    }
                }
                return rows;
            }

            @Override
            public void setTopic(String topic) throws SQLException {
                try (PreparedStatement ps = c.prepareStatement("SELECT set_config('realtime.topic', ?, true)")) {
                    ps.setString(1, topic);
                    ps.executeQuery().close();
                }
            }
        };
    }

    /** Rolls back to the item's savepoint; false when the session cannot (it is then not reused). */
    private static boolean rolledBack(Connection c) {
        try (Statement s = c.createStatement()) {
            s.execute("ROLLBACK TO SAVEPOINT aura_check");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /**
     * A connection in a transaction set up for tenant code (role, claims, search_path, timeout).
     * The setup is our SQL and runs no tenant code, so its failure means the pooled session was
     * already broken (e.g. Postgres restarted since): that one is dropped and a fresh one tried once.
     */
    private Connection prepared(String pgRole, String claims, String schema, Duration limit, boolean write)
            throws Unavailable {
        SQLException last = null;
        for (int attempt = 0; attempt < 2; attempt++) {
            Connection c;
            try {
                c = pool.getConnection();
            } catch (SQLException e) {
                if ("28P01".equals(e.getSQLState())
                        || (e.getCause() instanceof SQLException cause && "28P01".equals(cause.getSQLState()))) {
                    refused.run();
                }
                throw new Unavailable("no connection of the tenant login: " + e.getMessage(), e);
            }
            try {
                c.setAutoCommit(false);
                if (write) {
                    try (Statement s = c.createStatement()) {
                        s.execute("SET TRANSACTION READ WRITE"); // must precede every other statement
                    }
                }
                try (PreparedStatement ps = c.prepareStatement(SETUP)) {
                    ps.setString(1, pgRole == null ? "none" : pgRole);
                    ps.setString(2, claims);
                    ps.setString(3, searchPath(schema));
                    ps.setString(4, Math.max(1, limit.toMillis()) + "ms");
                    ps.executeQuery().close();
                }
                return c;
            } catch (SQLException e) {
                last = e;
                release(c, false);
            }
        }
        throw new Unavailable("the tenant login's sessions fail before any tenant code: " + last.getMessage(), last);
    }

    /** {@code pg_catalog, "<schema>"}: built-ins first, then the project's own names (its "public"). */
    private static String searchPath(String schema) {
        return "pg_catalog, \"" + schema.replace("\"", "\"\"") + "\"";
    }

    /** Whether this session still answers a trivial statement (after rolling back the failed one). */
    private static boolean answers(Connection c) {
        try (Statement s = c.createStatement()) {
            c.rollback();
            s.execute("SELECT 1");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    private boolean freshSessionAnswers() {
        try (Connection c = pool.getConnection();
                Statement s = c.createStatement()) {
            s.execute("SELECT 1");
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    /** Rolls back and resets the session, then returns it to the pool; a session that fails that is dropped. */
    void release(Connection c, boolean usable) {
        try {
            if (usable && !c.isClosed()) {
                c.rollback();
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    s.execute("DISCARD ALL");
                }
            } else {
                pool.evictConnection(c);
            }
        } catch (SQLException e) {
            pool.evictConnection(c);
        } finally {
            try {
                c.close();
            } catch (SQLException ignored) {
                // already evicted
            }
        }
    }

    static HikariDataSource pool(TenantDb.Settings s, String name, int size) {
        return pool(dataSource(s, s.user(), s.password()), s, name, size, false);
    }

    /** A data source of {@code user} (null: the URL's) with the options of every tenant session. */
    static PGSimpleDataSource dataSource(TenantDb.Settings s, String user, String password) {
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setUrl(s.url());
        if (user != null) {
            pg.setUser(user);
            pg.setPassword(password);
        }
        String ours = "-c statement_timeout=" + s.statementTimeout().toMillis() + " -c lock_timeout="
                + s.lockTimeout().toMillis() + " -c default_transaction_read_only=on"
                + " -c idle_in_transaction_session_timeout=60000";
        pg.setOptions(pg.getOptions() == null ? ours : pg.getOptions() + " " + ours);
        pg.setApplicationName("aura-cdc-worker-tenant");
        pg.setPrepareThreshold(0); // no named server statements a tenant's DEALLOCATE could pull away
        // the last resort against a backend that neither times out nor dies: the socket gives up
        pg.setSocketTimeout((int) Math.max(10, s.statementTimeout().toSeconds() * 4));
        pg.setConnectTimeout((int) Math.max(1, s.checkoutTimeout().toSeconds()));
        return pg;
    }

    /** @param onDemand connections opened when asked for and closed after a minute idle (project logins) */
    static HikariDataSource pool(PGSimpleDataSource pg, TenantDb.Settings s, String name, int size, boolean onDemand) {
        HikariConfig hc = new HikariConfig();
        if (onDemand) {
            hc.setMinimumIdle(0);
            hc.setIdleTimeout(60_000);
        }
        hc.setDataSource(pg);
        hc.setPoolName(name);
        hc.setMaximumPoolSize(size);
        hc.setInitializationFailTimeout(-1);
        hc.setConnectionTimeout(s.checkoutTimeout().toMillis());
        // A SQLSTATE is no evidence here (tenant code raises 08006 at will): the pool must not drop
        // a session for it; run() evicts what its probe finds broken.
        hc.setExceptionOverride(new KeepSessions());
        return new HikariDataSource(hc);
    }

    /** Hikari's eviction by SQLSTATE, switched off: {@link #run} decides by probing. */
    private static final class KeepSessions implements SQLExceptionOverride {
        @java.lang.Override
        public SQLExceptionOverride.Override adjudicate(SQLException e) {
            return SQLExceptionOverride.Override.DO_NOT_EVICT;
        }
    }
}
