package dev.aura.realtime.cdc.failure;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every WARN and ERROR line of the cdc-worker starts with {@code [Code]} from {@link LogCode}:
 * read off the sources, where each {@code log.warn(}/{@code log.error(} call must begin with a
 * literal {@code "[UpperCamelCode] "}, or {@code "[{}] "} with a {@link LogCode} as first argument.
 */
class LogCodeTest {
    private static final Path MAIN = Path.of("src/main/java");
    private static final Pattern CALL =
            Pattern.compile("\\blog\\.(warn|error)\\(\\s*\"((?:[^\"\\\\]|\\\\.)*)\"\\s*(,\\s*([^,)]+))?");
    private static final Pattern ANY_CALL = Pattern.compile("\\blog\\.(warn|error)\\(");
    private static final Pattern LITERAL_CODE = Pattern.compile("^\\[([A-Z][A-Za-z]+)\\] .*", Pattern.DOTALL);

    @Test
    void everyWarnAndErrorLineStartsWithACodeOfTheClosedList() throws IOException {
        Set<String> known =
                Arrays.stream(LogCode.values()).map(LogCode::toString).collect(Collectors.toSet());
        List<String> problems = new ArrayList<>();
        Set<String> used = new TreeSet<>();
        for (Path file : sources()) {
            String text = Files.readString(file, StandardCharsets.UTF_8);
            long calls = ANY_CALL.matcher(text).results().count();
            Matcher m = CALL.matcher(text);
            long literalCalls = 0;
            while (m.find()) {
                literalCalls++;
                String message = m.group(2);
                Matcher code = LITERAL_CODE.matcher(message);
                if (code.matches()) {
                    if (known.contains(code.group(1))) {
                        used.add(code.group(1));
                    } else {
                        problems.add(file + ": unknown code [" + code.group(1) + "]");
                    }
                } else if (!message.startsWith("[{}] ") || m.group(4) == null) {
                    problems.add(file + ": no [Code] at the start of \"" + message + "\"");
                }
            }
            if (literalCalls != calls) {
                problems.add(file + ": a WARN/ERROR call whose message is not a string literal");
            }
            Matcher refs = Pattern.compile("LogCode\\.([A-Z_]+)").matcher(text);
            while (refs.find()) {
                used.add(LogCode.valueOf(refs.group(1)).toString());
            }
        }
        assertThat(problems).isEmpty();
        assertThat(used).as("every code is logged somewhere").containsExactlyInAnyOrderElementsOf(new TreeSet<>(known));
    }

    @Test
    void codesAreUpperCamelCaseOfTheConstantName() {
        assertThat(LogCode.RLS_CHECK_FAILED).hasToString("RlsCheckFailed");
        assertThat(LogCode.NATS_CONNECTION_DEAF).hasToString("NatsConnectionDeaf");
        assertThat(LogCode.CDC_NOT_ACTIVE).hasToString("CdcNotActive");
    }

    private static List<Path> sources() throws IOException {
        try (Stream<Path> files = Files.walk(MAIN)) {
            return files.filter(f -> f.toString().endsWith(".java"))
                    .filter(f -> !f.endsWith("LogCode.java"))
                    .toList();
        }
    }
}
