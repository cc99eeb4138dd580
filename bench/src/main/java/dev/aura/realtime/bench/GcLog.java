package dev.aura.realtime.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Reads unified GC logs ({@code -Xlog:gc}): lines like {@code Pause Young (Normal) ... 120M->30M(256M) 3.1ms}. */
final class GcLog {
    private static final Pattern PAUSE = Pattern.compile("Pause.* (\\d+)M->(\\d+)M\\((\\d+)M\\)");

    private GcLog() {}

    /** @return {max heap before a GC, max heap after a GC, number of GCs}, in MB */
    static long[] peakMb(Path log) throws IOException {
        long before = 0;
        long after = 0;
        long count = 0;
        if (!Files.exists(log)) {
            return new long[] {-1, -1, 0};
        }
        for (String line : Files.readAllLines(log)) {
            Matcher m = PAUSE.matcher(line);
            if (m.find()) {
                before = Math.max(before, Long.parseLong(m.group(1)));
                after = Math.max(after, Long.parseLong(m.group(2)));
                count++;
            }
        }
        return new long[] {before, after, count};
    }
}
