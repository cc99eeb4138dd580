package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

/**
 * One of our binaries ({@code cdc-worker}, {@code ws-front}) running as a child process.
 *
 * <p>The process gets exactly the environment passed to {@link #startJar} plus {@code PATH},
 * {@code HOME} and {@code LANG} of the test JVM, so a test controls every configuration variable.
 * stdout and stderr go to {@link #logFile()} under {@code target/service-logs/} of the module
 * running the test; the file is kept after the test for post-mortems.
 */
public final class ServiceProcess implements AutoCloseable {
    private static final Path TEMURIN_25 = Path.of("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java");
    private static final Duration STOP_GRACE = Duration.ofSeconds(15);
    private static final AtomicInteger SEQUENCE = new AtomicInteger();

    private final String name;
    private final Process process;
    private final Path logFile;

    private ServiceProcess(String name, Process process, Path logFile) {
        this.name = name;
        this.process = process;
        this.logFile = logFile;
    }

    /**
     * Starts {@code java [jvmArgs] -jar jar} with Temurin 25 if installed, else the JVM running the
     * tests.
     *
     * @param name short name used in the log file name and messages, e.g. {@code "cdc-worker"}
     * @param jar the runnable jar, usually from {@link Jars}
     * @param env environment variables for the process (only these plus PATH, HOME, LANG)
     * @param jvmArgs JVM options placed before {@code -jar}, e.g. {@code -Xmx256m}
     * @throws UncheckedIOException if the process cannot be started
     */
    public static ServiceProcess startJar(String name, Path jar, Map<String, String> env, List<String> jvmArgs) {
        List<String> command = new ArrayList<>();
        command.add(javaBinary().toString());
        command.addAll(jvmArgs);
        command.add("-jar");
        command.add(jar.toAbsolutePath().toString());

        Path logFile = newLogFile(name);
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
        Map<String, String> processEnv = builder.environment();
        processEnv.clear();
        for (String inherited : List.of("PATH", "HOME", "LANG")) {
            String value = System.getenv(inherited);
            if (value != null) {
                processEnv.put(inherited, value);
            }
        }
        processEnv.putAll(env);
        try {
            Files.writeString(logFile, "# " + String.join(" ", command) + "\n", StandardCharsets.UTF_8);
            Process process = builder.start();
            process.getOutputStream().close();
            return new ServiceProcess(name, process, logFile);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + ": " + String.join(" ", command), e);
        }
    }

    /** Returns the short name given to {@link #startJar}. */
    public String name() {
        return name;
    }

    /** Returns the OS process id. */
    public long pid() {
        return process.pid();
    }

    /** Returns true while the process runs. */
    public boolean isAlive() {
        return process.isAlive();
    }

    /** Returns the file receiving the process's stdout and stderr. */
    public Path logFile() {
        return logFile;
    }

    /**
     * Waits until a line of the log matches {@code pattern} (found with {@link Matcher#find()}).
     *
     * @param pattern what to look for
     * @param timeout how long to wait
     * @return the first matching line
     * @throws AssertionError if the timeout passes or the process exits first; the message has the
     *     log tail
     */
    public String waitForLog(Pattern pattern, Duration timeout) {
        try {
            return Awaitility.await()
                    .atMost(timeout)
                    .pollDelay(Duration.ZERO)
                    .pollInterval(Duration.ofMillis(50))
                    .until(() -> matchingLine(pattern), line -> line.isPresent() || !process.isAlive())
                    // Read once more after an exit: the line may have been written just before it.
                    .or(() -> matchingLine(pattern))
                    .orElseThrow(() -> new AssertionError(name + " exited with " + process.exitValue()
                            + " before logging /" + pattern + "/\n--- tail of " + logFile + " ---\n" + logTail(40)));
        } catch (ConditionTimeoutException e) {
            throw new AssertionError(
                    name + " did not log /" + pattern + "/ within " + timeout + "\n--- tail of " + logFile + " ---\n"
                            + logTail(40),
                    e);
        }
    }

    private Optional<String> matchingLine(Pattern pattern) {
        return readLog().stream().filter(line -> pattern.matcher(line).find()).findFirst();
    }

    /** Returns the last {@code lines} lines of the log. */
    public String logTail(int lines) {
        return Commands.tail(logFile, lines);
    }

    /** Kills the process with SIGKILL and waits for it to exit. */
    public void kill9() {
        process.destroyForcibly();
        awaitExit(Duration.ofSeconds(30));
    }

    /**
     * Sends SIGTERM and waits up to 15 s for the process to exit, then SIGKILLs it.
     *
     * @return the exit code (137 after SIGKILL)
     */
    public int stop() {
        if (process.isAlive()) {
            process.destroy();
            if (!awaitExit(STOP_GRACE)) {
                kill9();
            }
        }
        return process.exitValue();
    }

    /** Stops the process as {@link #stop()} does. Idempotent. */
    @Override
    public void close() {
        stop();
    }

    @Override
    public String toString() {
        return "ServiceProcess[" + name + ", pid " + process.pid() + ", log " + logFile + "]";
    }

    private boolean awaitExit(Duration timeout) {
        try {
            return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private List<String> readLog() {
        try {
            return List.of(new String(Files.readAllBytes(logFile), StandardCharsets.UTF_8).split("\n"));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + logFile, e);
        }
    }

    private static Path javaBinary() {
        if (Files.isExecutable(TEMURIN_25)) {
            return TEMURIN_25;
        }
        return Path.of(System.getProperty("java.home"), "bin", "java");
    }

    private static Path newLogFile(String name) {
        Path dir = Path.of("target", "service-logs").toAbsolutePath();
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create " + dir, e);
        }
        String stamp = LocalDateTime.now().format(DateTimeFormatter.ofPattern("HHmmss"));
        return dir.resolve(name + "-" + stamp + "-" + SEQUENCE.incrementAndGet() + ".log");
    }
}
