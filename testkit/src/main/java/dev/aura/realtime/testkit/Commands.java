package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Small process and file helpers shared by the fixtures. */
final class Commands {
    private Commands() {}

    /** Output and exit code of a finished command. */
    record Result(int exitCode, String output) {}

    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Prefixes {@code command} so it runs as the OS user postgres when this JVM runs as root (Postgres refuses root). */
    static List<String> asPostgresUser(List<String> command) {
        if (!isRoot()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(List.of("runuser", "-u", "postgres", "--"));
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * Runs {@code command} to completion with stderr merged into stdout.
     *
     * @throws IllegalStateException if it does not finish within {@code timeout}
     */
    static Result run(List<String> command, Duration timeout) {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        try {
            Process process = builder.start();
            process.getOutputStream().close();
            // Read on this thread: outputs of the commands we run are small.
            byte[] output = process.getInputStream().readAllBytes();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("timed out after " + timeout + ": " + String.join(" ", command));
            }
            return new Result(process.exitValue(), new String(output, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + String.join(" ", command), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while running " + String.join(" ", command), e);
        }
    }

    /** Runs {@code command} and fails with its output unless it exits with 0. */
    static String runOrFail(List<String> command, Duration timeout, String what) {
        Result result = run(command, timeout);
        if (result.exitCode() != 0) {
            throw new IllegalStateException(what + " failed (exit " + result.exitCode() + "): "
                    + String.join(" ", command) + "\n" + result.output());
        }
        return result.output();
    }

    /** Returns the last {@code lines} lines of a text file, or a note if it cannot be read. */
    static String tail(Path file, int lines) {
        try {
            if (!Files.exists(file)) {
                return "(" + file + " does not exist)";
            }
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")";
        }
    }

    /** Deletes a directory tree; missing directories are fine. */
    static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }

    /** Finds an executable by name on PATH or in the extra directories, or returns null. */
    static Path findExecutable(String name, List<String> extraDirs) {
        List<String> dirs = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            dirs.addAll(List.of(path.split(":")));
        }
        dirs.addAll(extraDirs);
        for (String dir : dirs) {
            if (dir.isEmpty()) {
                continue;
            }
            Path candidate = Path.of(dir, name);
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
