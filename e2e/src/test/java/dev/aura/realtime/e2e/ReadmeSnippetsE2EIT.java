package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.testkit.Jars;
import dev.aura.realtime.testkit.Waits;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 40, "the first ten minutes": the README's Node snippets, taken from its fenced blocks
 * marked {@code js <file>.mjs}, run as they are written with this machine's Node 20 (which has no
 * WebSocket of its own) and the npm packages of {@code e2e/js} against the real jars. The only
 * change is the port: {@code localhost:4000} becomes {@code localhost:<the test's ws-front>}. Each
 * snippet prints {@code SUBSCRIBED} and a row inserted afterwards; with an expired key it prints
 * the {@code system} error and {@code CHANNEL_ERROR} with {@code Token has expired N seconds ago}.
 */
class ReadmeSnippetsE2EIT {
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final Pattern FENCED = Pattern.compile("(?ms)^```js (\\S+\\.mjs)\\n(.*?)^```$");
    private static final String README_PORT = "localhost:4000";
    private static E2eStack stack;
    private static Map<String, String> snippets;

    @BeforeAll
    static void start() throws IOException {
        snippets = snippets(Files.readString(Jars.repoRoot().resolve("README.md")));
        stack = E2eStack.startDefault(1);
        stack.createEnabledTable(
                "messages",
                "(id bigserial PRIMARY KEY, body text NOT NULL, author text, created_at timestamptz NOT NULL DEFAULT now())");
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    static Map<String, String> snippets(String readme) {
        Map<String, String> found = new LinkedHashMap<>();
        Matcher m = FENCED.matcher(readme);
        while (m.find()) {
            found.put(m.group(1), m.group(2));
        }
        return found;
    }

    @Test
    void theReadmeHasBothSnippetsAndTheyRunOnNode20() throws Exception {
        assertThat(snippets).containsOnlyKeys("sub.mjs", "sub-supabase.mjs");
        Process version = new ProcessBuilder(node(), "--version").start();
        String v = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertThat(v)
                .as("the README promises Node 20 (Node 22 has a WebSocket of its own and would hide a missing"
                        + " transport)")
                .startsWith("v20.");
    }

    @ParameterizedTest
    @ValueSource(strings = {"sub.mjs", "sub-supabase.mjs"})
    void aSnippetPrintsSubscribedAndARowInsertedAfterwards(String file) throws Exception {
        String body = "readme " + UUID.randomUUID();
        try (Snippet run = Snippet.start(file, stack.tokens.anon(stack.projectId))) {
            run.await("SUBSCRIBED", line -> line.startsWith("SUBSCRIBED"));
            run.await(
                    "the system message of postgres_changes",
                    line -> line.equals("system: ok Subscribed to PostgreSQL"));
            stack.sql("INSERT INTO " + stack.table("messages") + "(body, author) VALUES ('" + body + "', 'readme')");
            run.await("the inserted row", line -> line.contains(body));
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"sub.mjs", "sub-supabase.mjs"})
    void aSnippetWithAnExpiredKeyPrintsWhy(String file) throws Exception {
        try (Snippet run = Snippet.start(file, stack.tokens.expired("anon", stack.projectId))) {
            run.await(
                    "the system error",
                    line -> line.matches("system: error InvalidJWTToken: Token has expired \\d+ seconds ago"));
            run.await(
                    "CHANNEL_ERROR with the reason",
                    line -> line.matches("CHANNEL_ERROR InvalidJWTToken: Token has expired \\d+ seconds ago"));
        }
    }

    private static String node() {
        return System.getenv().getOrDefault("NODE_BIN", "node");
    }

    /** One snippet running in a directory of its own whose {@code node_modules} is e2e/js's. */
    private static final class Snippet implements AutoCloseable {
        private final Process process;
        private final Path dir;
        private final List<String> lines = new CopyOnWriteArrayList<>();

        private Snippet(Process process, Path dir) {
            this.process = process;
            this.dir = dir;
            Thread.ofVirtual().start(() -> {
                try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        lines.add(line);
                    }
                } catch (IOException e) {
                    lines.add("(reading the output failed: " + e + ")");
                }
            });
        }

        static Snippet start(String file, String anonKey) throws IOException {
            String code = snippets.get(file);
            assertThat(code).as(file + " in README.md").isNotNull().contains(README_PORT);
            Path dir = Files.createTempDirectory("readme-snippet");
            Files.createSymbolicLink(
                    dir.resolve("node_modules"), Jars.repoRoot().resolve("e2e/js/node_modules"));
            Files.writeString(dir.resolve(file), code.replace(README_PORT, "localhost:" + stack.wsPort(0)));
            ProcessBuilder pb =
                    new ProcessBuilder(node(), file).directory(dir.toFile()).redirectErrorStream(true);
            pb.environment().put("ANON_KEY", anonKey);
            return new Snippet(pb.start(), dir);
        }

        void await(String what, java.util.function.Predicate<String> line) {
            Waits.until(
                    what,
                    WAIT,
                    Duration.ofMillis(50),
                    () -> lines.stream().anyMatch(line),
                    () -> String.join("\n", lines));
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }
}
