package dev.aura.realtime.testkit;

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
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code nats-server -js} process for tests, bound to 127.0.0.1 on a free port with its
 * JetStream store in a temporary directory.
 *
 * <p>{@link #stop()} (SIGTERM) and {@link #kill()} (SIGKILL) keep the store directory;
 * {@link #restart()} starts a new process on the same port and store, so file-backed JetStream
 * state survives and memory-backed state (e.g. memory KV buckets) is lost, as in production.
 * {@link #close()} stops the server and deletes the directory. Server output goes to
 * {@link #logFile()}.
 */
public final class NatsServer implements AutoCloseable {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(20);
    private static final String INSTALL_HINT = "run scripts/stack.sh install (or: apt-get install nats-server)";

    private static NatsServer shared;

    private final Path binary;
    private final Path baseDir;
    private final Path storeDir;
    private final Path logFile;
    private final int port;
    private Process process;
    private boolean closed;

    private NatsServer(Path binary, Path baseDir, int port) {
        this.binary = binary;
        this.baseDir = baseDir;
        this.storeDir = baseDir.resolve("store");
        this.logFile = baseDir.resolve("nats-server.log");
        this.port = port;
    }

    /**
     * Starts a new server on a free port and waits until it accepts client connections.
     *
     * @throws IllegalStateException if {@code nats-server} is not installed (with the install
     *     command) or does not accept connections within 20 s (with the tail of its log)
     */
    public static NatsServer start() {
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
        IllegalStateException lastFailure = null;
        // Another process may take the probed port before nats-server binds it: retry with a new one.
        for (int attempt = 0; attempt < 3; attempt++) {
            NatsServer server = new NatsServer(binary, baseDir, Ports.free());
            try {
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

    /** Returns the client URL, {@code nats://127.0.0.1:<port>}. */
    public String url() {
        return "nats://127.0.0.1:" + port;
    }

    /** Returns the client TCP port; stable across {@link #restart()}. */
    public int port() {
        return port;
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

    private void launch() {
        try {
            Files.createDirectories(storeDir);
            process = new ProcessBuilder(
                            binary.toString(),
                            "-js",
                            "-a",
                            "127.0.0.1",
                            "-p",
                            String.valueOf(port),
                            "-sd",
                            storeDir.toString(),
                            "-n",
                            "aura-test-" + port)
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
