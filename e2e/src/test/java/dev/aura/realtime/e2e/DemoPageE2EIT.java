package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.testkit.Jars;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The demo page served by the ws-front jar, opened in headless Debian Chromium by
 * {@code e2e/js/demo-page.mjs} (playwright-core): two pages see each other's presence, a row
 * inserted with SQL appears in the live table, a broadcast crosses, a closed page leaves, and a
 * page opened with an expired key shows why it was refused.
 */
class DemoPageE2EIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static E2eStack stack;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        assertThat(Files.isExecutable(CHROMIUM))
                .as("Debian chromium is installed (scripts/stack.sh install)")
                .isTrue();
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

    private HttpResponse<byte[]> get(String path) throws Exception {
        return http.send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + stack.wsPort(0) + path))
                        .build(),
                HttpResponse.BodyHandlers.ofByteArray());
    }

    @Test
    void thePageServesTheUnmodifiedSupabaseJsBuildFromNpm() throws Exception {
        HttpResponse<byte[]> page = get("/");
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("content-type")).hasValue("text/html; charset=utf-8");
        assertThat(new String(page.body(), StandardCharsets.UTF_8))
                .contains("/demo/supabase.js")
                .contains("/demo/demo.js");
        Path npm = Jars.repoRoot().resolve("e2e/js/node_modules/@supabase/supabase-js/dist/umd/supabase.js");
        assertThat(get("/demo/supabase.js").body())
                .as("vendored copy equals " + npm)
                .isEqualTo(Files.readAllBytes(npm));
        assertThat(get("/demo/nope.js").statusCode()).isEqualTo(404);
    }

    @Test
    void twoBrowserPagesSeeARowInsertedWithSqlEachOthersPresenceAndABroadcast() throws Exception {
        Path root = Jars.repoRoot();
        String body = "demo row " + UUID.randomUUID();
        ProcessBuilder pb = new ProcessBuilder(System.getenv().getOrDefault("NODE_BIN", "node"), "e2e/js/demo-page.mjs")
                .directory(root.toFile())
                .redirectErrorStream(true);
        pb.environment()
                .put(
                        "DEMO_URL",
                        "http://127.0.0.1:" + stack.wsPort(0) + "/?apikey=" + stack.tokens.anon(stack.projectId));
        pb.environment()
                .put(
                        "DEMO_EXPIRED_URL",
                        "http://127.0.0.1:" + stack.wsPort(0) + "/?apikey="
                                + stack.tokens.expired("anon", stack.projectId));
        pb.environment().put("DEMO_ROW_BODY", body);
        Process node = pb.start();
        List<String> output = new CopyOnWriteArrayList<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                output.add(line);
                if (line.equals("READY")) {
                    stack.sql(
                            "INSERT INTO " + stack.table("messages") + "(body, author) VALUES ('" + body + "', 'e2e')");
                }
            }
        } finally {
            if (!node.waitFor(120, TimeUnit.SECONDS)) {
                node.destroyForcibly();
            }
        }
        assertThat(node.exitValue()).as(String.join("\n", output)).isZero();
        assertThat(output).contains("READY", "ROW", "DEMO OK");
        // a refused key shows its reason (issue 40: it was "transport failure")
        assertThat(output)
                .anyMatch(line -> line.matches(
                        "REFUSED CHANNEL_ERROR \\(InvalidJWTToken: Token has expired \\d+ seconds ago\\)"));
    }
}
