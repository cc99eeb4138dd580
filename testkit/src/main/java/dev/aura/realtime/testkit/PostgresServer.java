package dev.aura.realtime.testkit;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A throw-away PostgreSQL cluster configured for logical decoding with wal2json.
 *
 * <p>Each instance owns a fresh cluster in a temporary directory under {@code java.io.tmpdir}
 * ({@code initdb} runs as the OS user {@code postgres} when the JVM runs as root, because Postgres
 * refuses to run as root). The server listens on 127.0.0.1 on a free port with trust
 * authentication, {@code fsync=off}, and the logical-decoding settings written by
 * {@code docker/postgres-wal2json/install-wal2json.sh configure} (the one place that knows them).
 * Settings given to the {@link Builder} are appended after those, so they win.
 *
 * <p>Lifecycle: {@link #stop()} and {@link #kill()} leave the data directory in place and
 * {@link #restart()} starts the same cluster again on the same port; {@link #close()} stops it and
 * deletes the directory. Instances are safe to use from one test thread at a time.
 *
 * <p>The server process is {@link PostgresProcess}, the cluster's files {@link PostgresInit}, the
 * SQL conveniences {@link PostgresSql}.
 *
 * <pre>{@code
 * try (PostgresServer pg = PostgresServer.builder().setting("max_slot_wal_keep_size", "1MB").start()) {
 *   pg.execute("create table t(id int primary key)");
 * }
 * }</pre>
 */
public final class PostgresServer implements AutoCloseable {
    private static PostgresServer shared;

    private final Path binDir;
    private final Path baseDir;
    private final Path dataDir;
    private final Path logFile;
    private final int port;
    private final PostgresProcess process;
    private boolean closed;

    private PostgresServer(Path binDir, Path baseDir, int port) {
        this.binDir = binDir;
        this.baseDir = baseDir;
        this.dataDir = baseDir.resolve("data");
        this.logFile = baseDir.resolve("server.log");
        this.port = port;
        this.process = new PostgresProcess(binDir, dataDir, logFile, port);
    }

    /** Returns a builder for a new cluster; nothing is started until {@link Builder#start()}. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Creates and starts a new cluster with default settings.
     *
     * @throws IllegalStateException if Postgres or wal2json is not installed, or the server does not
     *     start within 60 s (the message ends with the tail of the server log)
     */
    public static PostgresServer start() {
        return builder().start();
    }

    /**
     * Returns a JVM-wide cluster, started on first use and closed by a shutdown hook. Use it only in
     * tests that neither stop, kill nor reconfigure the server; isolate tests by database or schema.
     *
     * @throws IllegalStateException as {@link #start()}
     */
    public static synchronized PostgresServer shared() {
        if (shared == null) {
            PostgresServer server = start();
            Runtime.getRuntime().addShutdownHook(new Thread(server::close, "postgres-server-shutdown"));
            shared = server;
        }
        return shared;
    }

    /** Returns the TCP port on 127.0.0.1; stable across {@link #stop()}/{@link #restart()}. */
    public int port() {
        return port;
    }

    /** Returns the data directory (the cluster's PGDATA). */
    public Path dataDir() {
        return dataDir;
    }

    /** Returns the server log file. */
    public Path logFile() {
        return logFile;
    }

    /** Returns the bin directory of the Postgres installation this cluster runs (psql, pg_recvlogical ...). */
    public Path binDir() {
        return binDir;
    }

    /** Returns a JDBC URL for superuser {@code postgres} (no password; trust auth) and database {@code postgres}. */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
    }

    /**
     * Returns a JDBC URL for database {@code postgres} with the given credentials. With trust
     * authentication the password is not checked, but the role must exist.
     */
    public String jdbcUrl(String user, String password) {
        return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=" + encode(user) + "&password="
                + encode(password);
    }

    /**
     * Opens a new autocommit connection as superuser {@code postgres}; the caller closes it.
     *
     * @throws UncheckedSqlException if the connection fails
     */
    public Connection connect() {
        return PostgresSql.connect(jdbcUrl());
    }

    /**
     * Runs each SQL statement in its own autocommit statement as superuser, in order.
     *
     * @throws UncheckedSqlException naming the failing statement
     */
    public void execute(String... sql) {
        PostgresSql.execute(jdbcUrl(), sql);
    }

    /**
     * Returns whether this server knows the configuration parameter {@code name} (a row in
     * {@code pg_settings}). Minor releases add parameters: {@code output_plugin_libraries} exists
     * from 15.20 on (and is unknown to 15.18), so tests that depend on such a capability ask the
     * server they run on and assert its behaviour.
     *
     * @throws UncheckedSqlException if the server cannot be queried
     */
    public boolean knowsSetting(String name) {
        return PostgresSql.knowsSetting(jdbcUrl(), name);
    }

    /**
     * Runs a query as superuser and returns the first column of its first row as text.
     *
     * @throws UncheckedSqlException if the query fails or returns no row
     */
    public String queryOne(String query) {
        return PostgresSql.queryOne(jdbcUrl(), query);
    }

    /** Returns {@code server_version} as the server reports it, e.g. {@code 15.18 (Debian 15.18-0+deb12u1)}. */
    public String serverVersion() {
        return PostgresSql.queryOne(jdbcUrl(), "show server_version");
    }

    /**
     * Starts the (stopped or killed) cluster again on the same port and data directory and waits
     * until it accepts connections; no-op when running.
     *
     * @throws IllegalStateException if it does not start within 60 s (with the server log tail)
     */
    public synchronized void restart() {
        if (closed) {
            throw new IllegalStateException("PostgresServer on port " + port + " is closed");
        }
        if (!process.running()) {
            process.start();
        }
    }

    /**
     * Stops the server with a fast shutdown (open sessions are rolled back) and waits for it;
     * data is kept. No-op when already stopped.
     */
    public synchronized void stop() {
        process.stop();
    }

    /**
     * Simulates a crash: SIGKILLs the postmaster and its backends without a checkpoint. The next
     * {@link #restart()} runs crash recovery.
     */
    public synchronized void kill() {
        process.kill();
    }

    /** Stops the server (fast) and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        try {
            stop();
        } catch (RuntimeException e) {
            kill();
        } finally {
            closed = true;
            Commands.deleteRecursively(baseDir);
        }
    }

    @Override
    public String toString() {
        return "PostgresServer[127.0.0.1:" + port + ", " + dataDir + "]";
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** Builds a {@link PostgresServer}; settings are written into postgresql.conf before the first start. */
    public static final class Builder {
        private final Map<String, String> settings = new LinkedHashMap<>();
        private boolean passwords;

        private Builder() {}

        /**
         * Makes every TCP login except superuser {@code postgres} authenticate with its password
         * (SCRAM) instead of trust, for tests of credentials; {@link #jdbcUrl()} keeps working.
         */
        public Builder requirePasswords() {
            passwords = true;
            return this;
        }

        /**
         * Adds a postgresql.conf setting, overriding the defaults (e.g.
         * {@code setting("max_slot_wal_keep_size", "1MB")} to let a test invalidate a slot). The value
         * is written quoted, so units are allowed.
         */
        public Builder setting(String name, String value) {
            if (!name.matches("[a-z_.]+")) {
                throw new IllegalArgumentException("not a setting name: " + name);
            }
            settings.put(name, value);
            return this;
        }

        /**
         * Creates the cluster, configures and starts it.
         *
         * @throws IllegalStateException if Postgres or wal2json is missing (with the install command),
         *     or the server does not start (with the tail of its log)
         */
        public PostgresServer start() {
            Path binDir = PostgresInstallation.binDir();
            Path baseDir = PostgresInit.createBaseDir();
            IllegalStateException lastFailure = null;
            try {
                PostgresInit.initdb(binDir, baseDir.resolve("data"));
                if (passwords) {
                    PostgresInit.requirePasswords(baseDir.resolve("data"));
                }
                // Another process may take the probed port before Postgres binds it: retry with a new one.
                for (int attempt = 0; attempt < 3; attempt++) {
                    PostgresServer server = new PostgresServer(binDir, baseDir, Ports.free());
                    PostgresInit.writeConfig(binDir, server.dataDir, baseDir, server.port, settings);
                    try {
                        server.process.start();
                        return server;
                    } catch (IllegalStateException e) {
                        lastFailure = e;
                        if (!Commands.tail(server.logFile, 30).contains("could not bind")) {
                            break;
                        }
                    }
                }
            } catch (RuntimeException e) {
                Commands.deleteRecursively(baseDir);
                throw e;
            }
            Commands.deleteRecursively(baseDir);
            throw lastFailure;
        }
    }
}
