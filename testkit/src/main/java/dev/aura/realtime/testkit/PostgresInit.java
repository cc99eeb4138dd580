package dev.aura.realtime.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Creates the files of a throw-away cluster for {@link PostgresServer}: a private directory owned
 * by OS user postgres, {@code initdb}, and {@code postgresql.conf} (test settings, then the
 * logical-decoding settings of {@code install-wal2json.sh configure}, then the caller's
 * overrides, which therefore win).
 */
final class PostgresInit {
    private PostgresInit() {}

    /** A new {@code rwx------} directory under {@code java.io.tmpdir}, owned by postgres when we are root. */
    static Path createBaseDir() {
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

    /** {@code initdb} of {@code dataDir}: superuser postgres, trust authentication, UTF8, locale C. */
    static void initdb(Path binDir, Path dataDir) {
        Commands.runOrFail(
                Commands.asPostgresUser(List.of(
                        binDir.resolve("initdb").toString(),
                        "-D",
                        dataDir.toString(),
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

    /**
     * Appends the test settings (listen on 127.0.0.1:{@code port}, socket in {@code socketDir},
     * {@code fsync=off}), then the logical-decoding settings, then {@code overrides}.
     */
    static void writeConfig(Path binDir, Path dataDir, Path socketDir, int port, Map<String, String> overrides) {
        Path conf = dataDir.resolve("postgresql.conf");
        append(
                conf,
                List.of(
                        "",
                        "# aura-realtime testkit",
                        "listen_addresses = '127.0.0.1'",
                        "port = " + port,
                        "unix_socket_directories = '" + socketDir + "'",
                        "fsync = off",
                        "full_page_writes = off",
                        "max_connections = 200",
                        "logging_collector = off"));
        Commands.runOrFail(
                List.of(
                        "bash",
                        PostgresInstallation.configureScript().toString(),
                        "configure",
                        conf.toString(),
                        binDir.resolve("postgres").toString()),
                Duration.ofSeconds(60),
                "install-wal2json.sh configure");
        List<String> lines = new ArrayList<>();
        lines.add("# testkit overrides");
        overrides.forEach((name, value) -> lines.add(name + " = '" + value.replace("'", "''") + "'"));
        append(conf, lines);
    }

    /**
     * Replaces {@code pg_hba.conf} so that TCP logins other than superuser {@code postgres} must
     * give their password (SCRAM); {@code postgres} and replication keep trust authentication.
     */
    static void requirePasswords(Path dataDir) {
        Path hba = dataDir.resolve("pg_hba.conf");
        try {
            Files.write(
                    hba,
                    List.of(
                            "# aura-realtime testkit: passwords for every TCP login but postgres",
                            "local all all trust",
                            "local replication all trust",
                            "host all postgres 127.0.0.1/32 trust",
                            "host replication postgres 127.0.0.1/32 trust",
                            "host all all 127.0.0.1/32 scram-sha-256"),
                    StandardOpenOption.TRUNCATE_EXISTING);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + hba, e);
        }
    }

    private static void append(Path conf, List<String> lines) {
        try {
            Files.write(conf, lines, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + conf, e);
        }
    }
}
