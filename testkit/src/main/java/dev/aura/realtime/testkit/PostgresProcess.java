package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.awaitility.Awaitility;

/**
 * The server process of one {@link PostgresServer} cluster, controlled with {@code pg_ctl} (run
 * as OS user postgres when this JVM is root): start and wait until it accepts connections, fast
 * stop, and SIGKILL of the postmaster and its backends (a crash). Not thread-safe;
 * {@link PostgresServer} serialises calls.
 */
final class PostgresProcess {
    private static final Duration START_TIMEOUT = Duration.ofSeconds(60);
    /** A killed postmaster can leave its pid file and shared memory behind for a moment. */
    private static final int START_ATTEMPTS = 3;

    private final Path binDir;
    private final Path dataDir;
    private final Path logFile;
    private final int port;
    private boolean running;

    PostgresProcess(Path binDir, Path dataDir, Path logFile, int port) {
        this.binDir = binDir;
        this.dataDir = dataDir;
        this.logFile = logFile;
        this.port = port;
    }

    boolean running() {
        return running;
    }

    /**
     * Starts the server and waits until it accepts connections. A failed start is tried again
     * after half a second, at most {@value #START_ATTEMPTS} times in all: the remains of a killed
     * server (pid file, shared memory) clear by then.
     *
     * @throws IllegalStateException if it does not start (with the tail of the server log)
     */
    void start() {
        AtomicInteger attempts = new AtomicInteger();
        Awaitility.await()
                .atMost(START_TIMEOUT.plusSeconds(30).multipliedBy(START_ATTEMPTS))
                .pollInSameThread()
                .pollDelay(Duration.ZERO)
                .pollInterval(Duration.ofMillis(500))
                .until(() -> tryStart(attempts.incrementAndGet()));
        running = true;
    }

    private boolean tryStart(int attempt) {
        Commands.Result result = Commands.run(
                Commands.asPostgresUser(List.of(
                        bin("pg_ctl"),
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
            return true;
        }
        if (attempt >= START_ATTEMPTS) {
            throw new IllegalStateException("Postgres did not start on port " + port + " (" + dataDir + "): "
                    + result.output().strip() + "\n--- tail of " + logFile + " ---\n" + Commands.tail(logFile, 30));
        }
        return false;
    }

    /** Fast shutdown (open sessions are rolled back), waiting for it; no-op when stopped. */
    void stop() {
        if (!running) {
            return;
        }
        Commands.runOrFail(
                Commands.asPostgresUser(
                        List.of(bin("pg_ctl"), "-D", dataDir.toString(), "-m", "fast", "-w", "-t", "60", "stop")),
                Duration.ofSeconds(90),
                "pg_ctl stop");
        running = false;
    }

    /** SIGKILLs the postmaster and its backends without a checkpoint and waits for them to exit. */
    void kill() {
        if (!running) {
            return;
        }
        postmasterPid().flatMap(ProcessHandle::of).ifPresent(postmaster -> {
            List<ProcessHandle> backends = postmaster.descendants().toList();
            postmaster.destroyForcibly();
            backends.forEach(ProcessHandle::destroyForcibly);
            waitForExit(postmaster);
            backends.forEach(PostgresProcess::waitForExit);
        });
        running = false;
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
        } catch (ExecutionException e) {
            throw new IllegalStateException(e);
        }
    }

    private String bin(String name) {
        return binDir.resolve(name).toString();
    }
}
