package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/** Locates the Postgres binaries, the wal2json plugin and the configure script. */
final class PostgresInstallation {
    private static final String INSTALL_HINT =
            "run scripts/stack.sh install (or: apt-get install postgresql-15 postgresql-15-wal2json)";

    private PostgresInstallation() {}

    /**
     * Returns the bin directory of a Postgres installation that has wal2json: {@code $PG_BIN_DIR}
     * if set, else the newest {@code /usr/lib/postgresql/<major>/bin}.
     */
    static Path binDir() {
        String fromEnv = System.getenv("PG_BIN_DIR");
        List<Path> candidates = fromEnv != null && !fromEnv.isBlank() ? List.of(Path.of(fromEnv)) : debianBinDirs();
        Path withoutPlugin = null;
        for (Path binDir : candidates) {
            if (hasServerBinaries(binDir)) {
                if (hasWal2json(binDir)) {
                    return binDir;
                }
                withoutPlugin = binDir;
            }
        }
        if (withoutPlugin != null) {
            throw new IllegalStateException("wal2json.so not found next to " + withoutPlugin + " (looked in "
                    + withoutPlugin.resolveSibling("lib") + "): " + INSTALL_HINT);
        }
        throw new IllegalStateException("PostgreSQL server binaries (initdb, pg_ctl, postgres) not found in "
                + (candidates.isEmpty() ? "/usr/lib/postgresql/*/bin" : candidates) + " (set PG_BIN_DIR to override): "
                + INSTALL_HINT);
    }

    /** Returns {@code docker/postgres-wal2json/install-wal2json.sh} in the repository. */
    static Path configureScript() {
        Path script = RepoRoot.find().resolve("docker/postgres-wal2json/install-wal2json.sh");
        if (!Files.isRegularFile(script)) {
            throw new IllegalStateException("missing " + script + ": the testkit configures Postgres through it");
        }
        return script;
    }

    private static List<Path> debianBinDirs() {
        Path root = Path.of("/usr/lib/postgresql");
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        try (Stream<Path> majors = Files.list(root)) {
            return majors.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .sorted(Comparator.comparingInt(
                                    (Path p) -> Integer.parseInt(p.getFileName().toString()))
                            .reversed())
                    .map(p -> p.resolve("bin"))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list " + root, e);
        }
    }

    private static boolean hasServerBinaries(Path binDir) {
        return Stream.of("initdb", "pg_ctl", "postgres").allMatch(name -> Files.isExecutable(binDir.resolve(name)));
    }

    private static boolean hasWal2json(Path binDir) {
        if (Files.exists(binDir.resolveSibling("lib").resolve("wal2json.so"))) {
            return true;
        }
        Path pgConfig = binDir.resolve("pg_config");
        if (Files.isExecutable(pgConfig)) {
            Commands.Result result =
                    Commands.run(List.of(pgConfig.toString(), "--pkglibdir"), java.time.Duration.ofSeconds(10));
            return result.exitCode() == 0
                    && Files.exists(Path.of(result.output().strip(), "wal2json.so"));
        }
        return false;
    }
}
