package dev.aura.realtime.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Hot methods of a JFR recording's {@code jdk.ExecutionSample} events, the same data as
 * {@code jfr print --events jdk.ExecutionSample <file>}: "self" counts the top frame, "total" counts
 * every sample a method appears in (once per sample).
 */
final class JfrHotMethods {
    private JfrHotMethods() {}

    /** A markdown block: top self methods and top product methods by total, for threads matching the prefix. */
    static String summarize(Path file, String threadPrefix, int top) {
        if (!Files.isRegularFile(file)) {
            return "(no JFR file " + file + ")";
        }
        Map<String, Integer> self = new HashMap<>();
        Map<String, Integer> total = new HashMap<>();
        Map<String, Integer> threads = new HashMap<>();
        int samples = 0;
        try (RecordingFile rf = new RecordingFile(file)) {
            while (rf.hasMoreEvents()) {
                RecordedEvent e = rf.readEvent();
                if (!e.getEventType().getName().equals("jdk.ExecutionSample")) {
                    continue;
                }
                String thread = e.getThread("sampledThread") == null
                        ? "?"
                        : String.valueOf(e.getThread("sampledThread").getJavaName());
                if (threadPrefix != null && !thread.startsWith(threadPrefix)) {
                    continue;
                }
                RecordedStackTrace st = e.getStackTrace();
                if (st == null || st.getFrames().isEmpty()) {
                    continue;
                }
                samples++;
                threads.merge(thread.replaceAll("\\d+$", "N"), 1, Integer::sum);
                List<RecordedFrame> frames = st.getFrames();
                self.merge(name(frames.get(0)), 1, Integer::sum);
                Set<String> seen = new HashSet<>();
                for (RecordedFrame f : frames) {
                    String n = name(f);
                    if (seen.add(n)) {
                        total.merge(n, 1, Integer::sum);
                    }
                }
            }
        } catch (IOException e) {
            return "(cannot read " + file + ": " + e.getMessage() + ")";
        }
        StringBuilder sb = new StringBuilder();
        sb.append("`")
                .append(file.getFileName())
                .append("`: ")
                .append(samples)
                .append(" execution samples")
                .append(threadPrefix == null ? "" : " on threads `" + threadPrefix + "*`")
                .append("; by thread: ")
                .append(topOf(threads, 4, n -> true, samples))
                .append("\n\n");
        sb.append("- top self (top frame): ")
                .append(topOf(self, top, n -> true, samples))
                .append('\n');
        sb.append("- top product frames (total, incl. callees): ")
                .append(topOf(
                        total,
                        top,
                        n -> n.startsWith("dev.aura.") && !n.contains("Main.main") && !n.endsWith(".run"),
                        samples))
                .append('\n');
        return sb.toString();
    }

    private static String topOf(Map<String, Integer> counts, int top, Predicate<String> keep, int samples) {
        StringBuilder sb = new StringBuilder();
        counts.entrySet().stream()
                .filter(en -> keep.test(en.getKey()))
                .sorted((a, b) -> b.getValue() - a.getValue())
                .limit(top)
                .forEach(en -> sb.append(sb.length() == 0 ? "" : "; ")
                        .append('`')
                        .append(en.getKey())
                        .append("` ")
                        .append(String.format("%.0f%%", 100.0 * en.getValue() / Math.max(1, samples))));
        return sb.toString();
    }

    private static String name(RecordedFrame f) {
        if (f.getMethod() == null) {
            return "?";
        }
        String type = f.getMethod().getType().getName();
        return type + "." + f.getMethod().getName();
    }
}
