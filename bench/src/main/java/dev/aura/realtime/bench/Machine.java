package dev.aura.realtime.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Describes this machine and finds helper process ids. */
final class Machine {
    private Machine() {}

    static String describe() {
        String cpu = "?";
        try {
            for (String line : Procs.run(List.of("lscpu")).split("\n")) {
                if (line.startsWith("Model name:")) {
                    cpu = line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (RuntimeException e) {
            cpu = "unknown (" + e.getMessage() + ")";
        }
        String mem = "?";
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    mem = String.format("%.1f GiB", Long.parseLong(line.replaceAll("\\D", "")) / 1024.0 / 1024.0);
                }
            }
        } catch (Exception ignored) {
            // left as ?
        }
        return "- CPU: " + Procs.cpus() + " × " + cpu
                + " (shared with other workloads; numbers are noisy, hence ratios)\n"
                + "- memory: " + mem + "; kernel: " + firstLine(List.of("uname", "-sr")) + "; open files limit: "
                + firstLine(List.of("sh", "-c", "ulimit -n")) + "\n"
                + "- " + firstLine(List.of("sh", "-c", "/usr/lib/postgresql/*/bin/postgres --version"))
                + " with wal2json (testkit: fsync=off, "
                + "trust auth); "
                + firstLine(List.of("sh", "-c", "nats-server --version || /usr/sbin/nats-server --version")) + "\n"
                + "- JVM: " + firstLine(List.of(Procs.JDK + "java", "-version")) + " (services and load generator)";
    }

    private static String firstLine(List<String> command) {
        try {
            return Procs.run(command).strip().split("\n")[0];
        } catch (RuntimeException e) {
            return "?";
        }
    }
}
