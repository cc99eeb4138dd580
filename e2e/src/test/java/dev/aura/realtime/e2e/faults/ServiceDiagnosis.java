package dev.aura.realtime.e2e.faults;

import dev.aura.realtime.e2e.E2eStack;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * What a failed case of a long generated run prints so the failure can be read from the log alone
 * (the run is not replayed under the same load): the worker's {@code /health}, its slot, and the
 * product threads of both binaries ({@code jcmd Thread.print}, threads named {@code aura-*} and the
 * event loops).
 */
final class ServiceDiagnosis {
    private ServiceDiagnosis() {}

    static String of(E2eStack stack) {
        StringBuilder out = new StringBuilder("\n--- diagnosis at ")
                .append(java.time.Instant.now())
                .append(" ---\n");
        try {
            out.append("cdc-worker /health: ").append(stack.cdcHttp().health()).append('\n');
        } catch (Exception e) {
            out.append("cdc-worker /health: ").append(e).append('\n');
        }
        try {
            out.append("slot: ")
                    .append(stack.pg.queryOne(
                            "SELECT confirmed_flush_lsn || ' confirmed, wal at ' || pg_current_wal_lsn()"
                                    + " FROM pg_replication_slots WHERE slot_name = '" + stack.slot + "'"))
                    .append('\n');
        } catch (RuntimeException e) {
            out.append("slot: ").append(e).append('\n');
        }
        out.append("--- cdc-worker metrics ---\n")
                .append(counters(stack.cdcHttp().metrics()));
        out.append("--- ws-front 0 metrics ---\n")
                .append(counters(stack.http(stack.wsPort(0)).metrics()));
        out.append("--- cdc-worker threads ---\n")
                .append(threads(stack.cdcWorker().pid()));
        out.append("--- ws-front 0 threads ---\n")
                .append(threads(stack.wsFront(0).pid()));
        return out.toString();
    }

    /** The product's own metrics, without histogram buckets. */
    static String counters(String prometheus) {
        StringBuilder kept = new StringBuilder();
        for (String line : prometheus.split("\n")) {
            if (line.startsWith("aura_") && !line.contains("_bucket{")) {
                kept.append(line).append('\n');
            }
        }
        return kept.isEmpty() ? prometheus + "\n" : kept.toString();
    }

    /** The product's threads of one JVM, stack by stack. */
    static String threads(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process p = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Thread.print")
                    .redirectErrorStream(true)
                    .start();
            String dump = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor(30, TimeUnit.SECONDS);
            StringBuilder kept = new StringBuilder();
            for (String block : dump.split("\n\n")) {
                if (block.startsWith("\"aura-")
                        || block.startsWith("\"ws-front")
                        || block.startsWith("\"virtual")
                        || block.startsWith("\"nats")
                        || block.startsWith("\"pool-")) {
                    kept.append(block).append("\n\n");
                }
            }
            return kept.isEmpty() ? dump : kept.toString();
        } catch (IOException e) {
            return "jcmd failed: " + e + "\n";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted\n";
        }
    }
}
