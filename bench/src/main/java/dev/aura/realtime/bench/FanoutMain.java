package dev.aura.realtime.bench;

import dev.aura.realtime.testkit.Jars;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Only the ws-front figures ({@link FanoutFigures}: fan-out against raw NATS, idle heap, 100,000
 * connections), for quick runs and profiles while working on the write path; prints the table and
 * writes it with the profile to {@code bench/target/bench-run/fanout-report.md}. Started by
 * {@code scripts/bench-fanout.sh}; {@code docs/performance.md} is written by the full
 * {@link BenchMain} only.
 *
 * <pre>java -cp bench/target/bench.jar dev.aura.realtime.bench.FanoutMain [--clients 5000]
 *     [--burst-rate 100] [--burst-seconds 6] [--light-rate 5] [--light-seconds 6] [--rounds 5] [--idle 10000]
 *     [--scale 100000]</pre>
 */
public final class FanoutMain {
    private FanoutMain() {}

    public static void main(String[] args) throws Exception {
        FanoutFigures f = new FanoutFigures(
                arg(args, "--clients", 5_000),
                arg(args, "--burst-rate", 100),
                arg(args, "--burst-seconds", 6),
                arg(args, "--light-rate", 5),
                arg(args, "--light-seconds", 6),
                arg(args, "--rounds", Target.MIN_ROUNDS),
                arg(args, "--idle", 10_000),
                arg(args, "--scale", 0));
        Path runDir = Jars.repoRoot().resolve("bench/target/bench-run");
        Report report = new Report();
        long t0 = System.nanoTime();
        System.out.println("aura-realtime fan-out figures " + f + ", logs and JFR files in " + runDir);
        String machine = Machine.describe();
        System.out.println(machine);
        Stack stack = new Stack(runDir);
        Runtime.getRuntime().addShutdownHook(new Thread(stack::close, "bench-cleanup"));
        try (Stack s = stack) {
            f.run(s, report, runDir);
        }
        String table = report.table();
        System.out.println();
        System.out.println(table);
        StringBuilder md = new StringBuilder("# Fan-out figures (")
                .append(f)
                .append(String.format(", %.1f min)%n%n", (System.nanoTime() - t0) / 60e9))
                .append(machine)
                .append("\n\n")
                .append(table)
                .append('\n');
        report.notes.forEach(n -> md.append("- ").append(n).append('\n'));
        report.evidence.forEach(e -> md.append('\n').append(e));
        Path out = runDir.resolve("fanout-report.md");
        Files.writeString(out, md.toString(), StandardCharsets.UTF_8);
        System.out.println("wrote " + out);
    }

    private static int arg(String[] args, String name, int fallback) {
        for (int i = 0; i < args.length - 1; i++) {
            if (args[i].equals(name)) {
                return Integer.parseInt(args[i + 1].replace("_", "").replace(",", ""));
            }
        }
        return fallback;
    }
}
