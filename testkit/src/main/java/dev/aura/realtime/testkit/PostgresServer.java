package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

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
 * {@link #start()} starts the same cluster again on the same port; {@link #close()} stops it and
 * deletes the directory. Instances are safe to use from one test thread at a time.
 *
 * <pre>{@code
 * try (PostgresServer pg = PostgresServer.builder().setting("max_slot_wal_keep_size", "1MB").start()) {
 *   pg.execute("create table t(id int primary key)");
 * }
 * }</pre>
 */
public final class PostgresServer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

    private static PostgresServer shared;

    private final Path binDir;
    private final Path baseDir;
    private final Path dataDir;
    private final Path logFile;
    private int port;
    private boolean running;
    private boolean closed;

    private PostgresServer(Path binDir, Path baseDir, int port) {
        this.binDir = binDir;
        this.baseDir = baseDir;
        this.dataDir = baseDir.resolve("data");
        this.logFile = baseDir.resolve("server.log");
        this.port = port;
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

    /** Returns the TCP port on 127.0.0.1; stable across {@link #stop()}/{@link #start()}. */
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
        try {
            return DriverManager.getConnection(jdbcUrl());
        } catch (SQLException e) {
            throw new UncheckedSqlException("cannot connect to " + jdbcUrl(), e);
        }
    }

    /**
     * Runs each SQL statement in its own autocommit statement as superuser, in order.
     *
     * @throws UncheckedSqlException naming the failing statement
     */
    public void execute(String... sql) {
        try (Connection connection = connect();
                Statement statement = connection.createStatement()) {
            for (String each : sql) {
                try {
                    statement.execute(each);
                } catch (SQLException e) {
                    throw new UncheckedSqlException("failed: " + each, e);
                }
            }
        } catch (SQLException e) {
            throw new UncheckedSqlException("cannot close connection to " + jdbcUrl(), e);
        }
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
        try (Connection connection = connect();
                java.sql.PreparedStatement statement =
                        connection.prepareStatement("select count(*) from pg_settings where name = ?")) {
            statement.setString(1, name);
            try (java.sql.ResultSet rs = statement.executeQuery()) {
                rs.next();
                return rs.getInt(1) > 0;
            }
        } catch (SQLException e) {
            throw new UncheckedSqlException("cannot read pg_settings on " + jdbcUrl(), e);
        }
    }

    /** Returns {@code server_version} as the server reports it, e.g. {@code 15.18 (Debian 15.18-0+deb12u1)}. */
    public String serverVersion() {
        try (Connection connection = connect();
                Statement statement = connection.createStatement();
                java.sql.ResultSet rs = statement.executeQuery("show server_version")) {
            rs.next();
            return rs.getString(1);
        } catch (SQLException e) {
            throw new UncheckedSqlException("cannot read server_version on " + jdbcUrl(), e);
        }
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
        if (running) {
            return;
        }
        startServer();
    }

    /**
     * Stops the server with a fast shutdown (open sessions are rolled back) and waits for it;
     * data is kept. No-op when already stopped.
     */
    public synchronized void stop() {
        if (!running) {
            return;
        }
        Commands.runOrFail(
                Commands.asPostgresUser(List.of(
                        bin("pg_ctl").toString(), "-D", dataDir.toString(), "-m", "fast", "-w", "-t", "60", "stop")),
                Duration.ofSeconds(90),
                "pg_ctl stop");
        running = false;
    }

    /**
     * Simulates a crash: SIGKILLs the postmaster and its backends without a checkpoint. The next
     * {@link #restart()} runs crash recovery.
     */
    public synchronized void kill() {
        if (!running) {
            return;
        }
        postmasterPid().flatMap(ProcessHandle::of).ifPresent(postmaster -> {
            List<ProcessHandle> backends = postmaster.descendants().toList();
            postmaster.destroyForcibly();
            backends.forEach(ProcessHandle::destroyForcibly);
            waitForExit(postmaster);
            backends.forEach(PostgresServer::waitForExit);
        });
        running = false;
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

    // ---- internals ---------------------------------------------------------------------------

    private void startServer() {
        // A killed postmaster can leave its pid file and shared memory behind for a moment; retry.
        IllegalStateException last = null;
        for (int attempt = 0; attempt < 3; attempt++) {
            Commands.Result result = Commands.run(
                    Commands.asPostgresUser(List.of(
                            bin("pg_ctl").toString(),
                            "-D",
                            dataDir.toString(),
                            "-l",
                            logFile.toString(),
                            "-w",
                            "-t",
                            String.valueOf(START_TIMEOUT.toSeconds()),
                            "start")),
                    START_TIMEOUT.plusSeconds(30));
            if (result.exitCode() == 0) {
                running = true;
                return;
            }
            last = new IllegalStateException("Postgres did not start on port " + port + " (" + dataDir + "): "
                    + result.output().strip() + "\n--- tail of " + logFile + " ---\n" + Commands.tail(logFile, 30));
            Commands.sleep(Duration.ofMillis(500));
        }
        throw last;
    }

    private Optional<Long> postmasterPid() {
        Path pidFile = dataDir.resolve("postmaster.pid");
        try {
            if (!Files.exists(pidFile)) {
                return Optional.empty();
            }
            try (Stream<String> lines = Files.lines(pidFile)) {
                return lines.findFirst().map(String::strip).map(Long::parseLong);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + pidFile, e);
        }
    }

    private static void waitForExit(ProcessHandle handle) {
        try {
            handle.onExit().get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    private Path bin(String name) {
        return binDir.resolve(name);
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }

    /** Builds a {@link PostgresServer}; settings are written into postgresql.conf before the first start. */
    public static final class Builder {
        private final Map<String, String> settings = new LinkedHashMap<>();

        private Builder() {}

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
            Path baseDir = createBaseDir();
            IllegalStateException lastFailure = null;
            try {
                initdb(binDir, baseDir);
                // Another process may take the probed port before Postgres binds it: retry with a new one.
                for (int attempt = 0; attempt < 3; attempt++) {
                    PostgresServer server = new PostgresServer(binDir, baseDir, Ports.free());
                    writeConfig(server);
                    try {
                        server.startServer();
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

        private static Path createBaseDir() {
            try {
                Path dir = Files.createTempDirectory("aura-pg-");
                Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
                if (Commands.isRoot()) {
                    UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
                    Files.setOwner(dir, users.lookupPrincipalByName("postgres"));
                }
                return dir;
            } catch (IOException e) {
                throw new UncheckedIOException(
                        "cannot create a Postgres directory under " + System.getProperty("java.io.tmpdir")
                                + " owned by OS user postgres",
                        e);
            }
        }

        private static void initdb(Path binDir, Path baseDir) {
            Commands.runOrFail(
                    Commands.asPostgresUser(List.of(
                            binDir.resolve("initdb").toString(),
                            "-D",
                            baseDir.resolve("data").toString(),
                            "-U",
                            "postgres",
                            "-A",
                            "trust",
                            "-E",
                            "UTF8",
                            "--locale=C",
                            "--no-sync")),
                    Duration.ofMinutes(2),
                    "initdb");
        }

        private void writeConfig(PostgresServer server) {
            Path conf = server.dataDir.resolve("postgresql.conf");
            List<String> lines = new ArrayList<>();
            lines.add("");
            lines.add("# aura-realtime testkit");
            lines.add("listen_addresses = '127.0.0.1'");
            lines.add("port = " + server.port);
            lines.add("unix_socket_directories = '" + server.baseDir + "'");
            lines.add("fsync = off");
            lines.add("full_page_writes = off");
            lines.add("max_connections = 200");
            lines.add("logging_collector = off");
            try {
                Files.write(conf, lines, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + conf, e);
            }
            Commands.runOrFail(
                    List.of(
                            "bash",
                            PostgresInstallation.configureScript().toString(),
                            "configure",
                            conf.toString(),
                            server.bin("postgres").toString()),
                    Duration.ofSeconds(60),
                    "install-wal2json.sh configure");
            List<String> overrides = new ArrayList<>();
            overrides.add("# testkit overrides");
            settings.forEach((name, value) -> overrides.add(name + " = '" + value.replace("'", "''") + "'"));
            try {
                Files.write(conf, overrides, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot write " + conf, e);
            }
        }
    }
}
