package dev.aura.realtime.testkit;

import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.NatsSettings;
import io.nats.client.Connection;
import io.nats.client.Nats;
import io.nats.client.Options;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A {@code nats-server} process with JetStream for tests, bound to 127.0.0.1 on a free port with
 * its JetStream store in a temporary directory.
 *
 * <p><b>Authentication is always on</b>, with the product's subject permissions
 * ({@code deploy/k8s/files/nats-permissions.conf}): every server has its own generated
 * credentials for the three {@link User}s, and a client without them is refused, as in
 * production. The binaries get theirs through {@link #env} (or {@link #nkeyEnv},
 * {@link #credsEnv}); test code connects as the unrestricted {@link User#TEST} with
 * {@link #connect()}. {@link #startTls} adds TLS, optionally verifying client certificates.
 *
 * <p>{@link #stop()} (SIGTERM) and {@link #kill()} (SIGKILL) keep the store directory;
 * {@link #restart()} starts a new process on the same port, store and credentials, so
 * file-backed JetStream state survives and memory-backed state (e.g. memory KV buckets) is lost,
 * as in production. {@link #close()} stops the server and deletes the directory. Server output
 * goes to {@link #logFile()}.
 */
public final class NatsServer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);
    private static final String INSTALL_HINT = "run scripts/stack.sh install (or: apt-get install nats-server)";

    private static NatsServer shared;

    /** The users of every test server. */
    public enum User {
        /** The cdc-worker's user, with its permissions. */
        CDC_WORKER("aura-cdc-worker", "AURA_CDC_WORKER_PERMISSIONS"),
        /** ws-front's user, with its permissions. */
        WS_FRONT("aura-ws-front", "AURA_WS_FRONT_PERMISSIONS"),
        /** Test code: may publish and subscribe anything (to forge, observe and seed). */
        TEST("aura-test", null);

        private final String userName;
        private final String permissionsVariable;

        User(String userName, String permissionsVariable) {
            this.userName = userName;
            this.permissionsVariable = permissionsVariable;
        }

        /** The NATS user name. */
        public String userName() {
            return userName;
        }

        /** The permissions variable of nats-permissions.conf, null for the unrestricted test user. */
        String permissionsVariable() {
            return permissionsVariable;
        }
    }

    private final Path binary;
    private final Path baseDir;
    private final Path storeDir;
    private final Path logFile;
    private final Path configFile;
    private final int port;
    private final NatsUsers users;
    private final NatsPki pki;
    private final boolean verifyClients;
    private Process process;
    private boolean closed;

    private NatsServer(Path binary, Path baseDir, int port, NatsUsers users, NatsPki pki, boolean verifyClients) {
        this.binary = binary;
        this.baseDir = baseDir;
        this.storeDir = baseDir.resolve("store");
        this.logFile = baseDir.resolve("nats-server.log");
        this.configFile = baseDir.resolve("nats.conf");
        this.port = port;
        this.users = users;
        this.pki = pki;
        this.verifyClients = verifyClients;
    }

    /**
     * Starts a new server on a free port, with authentication and without TLS, and waits until it
     * accepts client connections.
     *
     * @throws IllegalStateException if {@code nats-server} is not installed (with the install
     *     command) or does not accept connections within 20 s (with the tail of its log)
     */
    public static NatsServer start() {
        return start(false, false);
    }

    /**
     * {@link #start()} with TLS: a fresh CA signs a certificate for 127.0.0.1 ({@link #caFile}),
     * and clients must present one signed by it when {@code verifyClients} ({@link #env} passes
     * the client certificate to every user).
     *
     * @throws IllegalStateException also when {@code openssl} is missing (with the install command)
     */
    public static NatsServer startTls(boolean verifyClients) {
        return start(true, verifyClients);
    }

    private static NatsServer start(boolean tls, boolean verifyClients) {
        Path binary = Commands.findExecutable("nats-server", List.of("/usr/sbin", "/usr/local/bin", "/usr/bin"));
        if (binary == null) {
            throw new IllegalStateException("nats-server not found on PATH or in /usr/sbin: " + INSTALL_HINT);
        }
        Path baseDir;
        try {
            baseDir = Files.createTempDirectory("aura-nats-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a temporary directory for nats-server", e);
        }
        NatsUsers users = new NatsUsers(baseDir);
        NatsPki pki = tls ? NatsPki.create(baseDir.resolve("pki")) : null;
        IllegalStateException lastFailure = null;
        // Another process may take the probed port before nats-server binds it: retry with a new one.
        for (int attempt = 0; attempt < 3; attempt++) {
            NatsServer server = new NatsServer(binary, baseDir, Ports.free(), users, pki, verifyClients);
            try {
                server.writeConfig();
                server.launch();
                return server;
            } catch (IllegalStateException e) {
                lastFailure = e;
                server.kill();
            }
        }
        Commands.deleteRecursively(baseDir);
        throw lastFailure;
    }

    /**
     * Returns a JVM-wide server, started on first use and closed by a shutdown hook. Use it only in
     * tests that do not stop or kill the server; isolate tests by subject prefix or bucket name.
     */
    public static synchronized NatsServer shared() {
        if (shared == null) {
            NatsServer server = start();
            Runtime.getRuntime().addShutdownHook(new Thread(server::close, "nats-server-shutdown"));
            shared = server;
        }
        return shared;
    }

    /** Returns the client URL, {@code nats://127.0.0.1:<port>} ({@code tls://} for a TLS server). */
    public String url() {
        return (pki == null ? "nats://" : "tls://") + "127.0.0.1:" + port;
    }

    /**
     * The variables a binary connecting as {@code user} needs: {@code NATS_URL}, {@code NATS_USER}
     * and {@code NATS_PASSWORD}, and for a TLS server {@code NATS_TLS_CA_FILE} (plus the client
     * certificate when the server verifies clients). A new mutable map.
     */
    public Map<String, String> env(User user) {
        Map<String, String> env = base(url());
        env.put("NATS_USER", user.userName());
        env.put("NATS_PASSWORD", users.password(user));
        return env;
    }

    /** {@link #env} with the user's nkey seed file ({@code NATS_NKEY_SEED_FILE}) instead of a password. */
    public Map<String, String> nkeyEnv(User user) {
        requireProductUser(user);
        Map<String, String> env = base(url());
        env.put("NATS_NKEY_SEED_FILE", users.seedFile(user).toString());
        return env;
    }

    /** {@link #env} with a creds file ({@code NATS_CREDS_FILE}: user JWT and seed) instead of a password. */
    public Map<String, String> credsEnv(User user) {
        requireProductUser(user);
        Map<String, String> env = base(url());
        env.put("NATS_CREDS_FILE", users.credsFile(user).toString());
        return env;
    }

    /** {@link #env} with {@code url} (e.g. a proxy in front of this server) as {@code NATS_URL}. */
    public Map<String, String> env(User user, String url) {
        Map<String, String> env = env(user);
        env.put("NATS_URL", url);
        return env;
    }

    private Map<String, String> base(String url) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("NATS_URL", url);
        if (pki != null) {
            env.put("NATS_TLS_CA_FILE", pki.caFile().toString());
            if (verifyClients) {
                env.put("NATS_TLS_CERT_FILE", pki.clientCert().toString());
                env.put("NATS_TLS_KEY_FILE", pki.clientKey().toString());
            }
        }
        return env;
    }

    private static void requireProductUser(User user) {
        if (user.permissionsVariable() == null) {
            throw new IllegalArgumentException(user + " has a password only");
        }
    }

    /**
     * A jnats builder connecting as {@code user}, built by the product's own {@link NatsSettings}
     * from {@link #env}, with the reply prefix the permissions give that user.
     */
    public Options.Builder options(User user) {
        return NatsSettings.fromEnv(new Env(env(user))).builder(NatsUsers.inboxPrefix(user));
    }

    /** A connection as the unrestricted {@link User#TEST} (jnats' default timings). */
    public Connection connect() {
        return connect(User.TEST);
    }

    /** A connection as {@code user} (jnats' default timings). */
    public Connection connect(User user) {
        try {
            return Nats.connect(
                    options(user).connectionTimeout(Duration.ofSeconds(5)).build());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot connect to " + this + " as " + user.userName(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while connecting to " + this, e);
        }
    }

    /** The CA certificate (PEM) of a TLS server. */
    public Path caFile() {
        if (pki == null) {
            throw new IllegalStateException(this + " has no TLS");
        }
        return pki.caFile();
    }

    /** Returns the client TCP port; stable across {@link #restart()}. */
    public int port() {
        return port;
    }

    /** The running server's process id (e.g. to pin it to a CPU in a benchmark). */
    public synchronized long pid() {
        if (process == null) {
            throw new IllegalStateException(this + " is not running");
        }
        return process.pid();
    }

    /** Returns the file that receives the server's stdout and stderr. */
    public Path logFile() {
        return logFile;
    }

    /** Returns true while the server process runs. */
    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /**
     * Starts the server again on the same port and store directory after {@link #stop()} or
     * {@link #kill()}, waiting until it accepts connections; no-op when running.
     *
     * @throws IllegalStateException if it does not accept connections within 20 s
     */
    public synchronized void restart() {
        if (closed) {
            throw new IllegalStateException("NatsServer on port " + port + " is closed");
        }
        if (isRunning()) {
            return;
        }
        // The old socket may linger briefly after a kill; retry until the port can be bound again.
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        while (true) {
            try {
                launch();
                return;
            } catch (IllegalStateException e) {
                if (Instant.now().isAfter(deadline)) {
                    throw e;
                }
                Commands.sleep(Duration.ofMillis(200));
            }
        }
    }

    /** Stops the server gracefully (SIGTERM, then SIGKILL after 10 s); the store is kept. */
    public synchronized void stop() {
        if (process == null) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
        process = null;
    }

    /** Kills the server with SIGKILL (simulates a crash); the store is kept. */
    public synchronized void kill() {
        if (process == null) {
            return;
        }
        process.destroyForcibly();
        try {
            process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        process = null;
    }

    /** Stops the server and deletes its directory. Idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        stop();
        Commands.deleteRecursively(baseDir);
    }

    @Override
    public String toString() {
        return "NatsServer[" + url() + "]";
    }

    /** nats.conf: listen address, JetStream store, the users with their permissions, TLS. */
    private void writeConfig() {
        StringBuilder conf = new StringBuilder()
                .append("listen: \"127.0.0.1:")
                .append(port)
                .append("\"\n")
                .append("server_name: \"aura-test-")
                .append(port)
                .append("\"\n")
                .append("jetstream {\n  store_dir: \"")
                .append(storeDir)
                .append("\"\n}\n")
                .append(users.config());
        if (pki != null) {
            conf.append("tls {\n")
                    .append("  cert_file: \"")
                    .append(pki.serverCert())
                    .append("\"\n")
                    .append("  key_file: \"")
                    .append(pki.serverKey())
                    .append("\"\n")
                    .append("  ca_file: \"")
                    .append(pki.caFile())
                    .append("\"\n")
                    .append("  verify: ")
                    .append(verifyClients)
                    .append("\n")
                    .append("  timeout: 5\n}\n");
        }
        try {
            Files.writeString(configFile, conf.toString());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + configFile, e);
        }
    }

    private void launch() {
        try {
            Files.createDirectories(storeDir);
            process = new ProcessBuilder(binary.toString(), "-c", configFile.toString())
                    .redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()))
                    .start();
            process.getOutputStream().close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + binary, e);
        }
        Instant deadline = Instant.now().plus(START_TIMEOUT);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                break;
            }
            if (answersInfo()) {
                return;
            }
            Commands.sleep(Duration.ofMillis(50));
        }
        String reason = process.isAlive()
                ? "did not accept connections within " + START_TIMEOUT
                : "exited with " + process.exitValue();
        kill();
        throw new IllegalStateException("nats-server on port " + port + " " + reason + "\n--- tail of " + logFile
                + " ---\n" + Commands.tail(logFile, 30));
    }

    /** True once a client connection is greeted with the server's INFO line. */
    private boolean answersInfo() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress("127.0.0.1", port), 500);
            socket.setSoTimeout(1000);
            BufferedReader reader =
                    new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String line = reader.readLine();
            return line != null && line.startsWith("INFO ");
        } catch (IOException e) {
            return false;
        }
    }
}
