package dev.aura.realtime.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Small OS helpers: CPU pinning with taskset, heap figures with jcmd. */
final class Procs {
    static final String JDK = "/usr/lib/jvm/temurin-25-jdk-amd64/bin/";
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    private Procs() {}

    /** Pins every thread of {@code pid} (and threads it creates later) to {@code cpus}, e.g. "0". */
    static void pin(long pid, String cpus) {
        run(List.of("taskset", "-a", "-cp", cpus, Long.toString(pid)));
    }

    static int cpus() {
        return Runtime.getRuntime().availableProcessors();
    }

    /** Full GC in the target JVM, then its heap used in bytes (from jcmd GC.heap_info). */
    static long heapUsedAfterGc(long pid) {
        run(List.of(JDK + "jcmd", Long.toString(pid), "GC.run"));
        String info = run(List.of(JDK + "jcmd", Long.toString(pid), "GC.heap_info"));
        Matcher m = HEAP_USED.matcher(info);
        if (!m.find()) {
            throw new IllegalStateException("no 'used NK' in jcmd GC.heap_info output:\n" + info);
        }
        return Long.parseLong(m.group(1)) * 1024;
    }

    static String run(List<String> command) {
        try {
            Process p = new ProcessBuilder(new ArrayList<>(command))
                    .redirectErrorStream(true)
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(command + " timed out");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(command + " exited with " + p.exitValue() + ": " + out);
            }
            return out;
        } catch (IOException e) {
            throw new IllegalStateException("cannot run " + command, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** CPU seconds (user + system) a process used so far, from /proc; 0 when it is gone. */
    static double cpuSeconds(long pid) {
        try {
            String stat = java.nio.file.Files.readString(java.nio.file.Path.of("/proc/" + pid + "/stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / 100.0; // utime, stime in USER_HZ (100)
        } catch (Exception gone) {
            return 0;
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
