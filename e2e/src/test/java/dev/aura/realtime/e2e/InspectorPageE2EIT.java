package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The inspector page served by the ws-front jar (docs/design.md D9), opened in headless Debian
 * Chromium by {@code e2e/js/inspector-page.mjs} (playwright-core): a page with the project's
 * service key and a page with the anon key and a user's token join one private channel with a
 * postgres_changes binding; each sees the other's presence, the service page lists a row inserted
 * with SQL with its event id and latency (a third page, with the anon key alone on a public channel,
 * lists it with the same event id) and the user page's broadcast with its latency, and shows
 * the project's CDC status, its connections and its quarantined change; the user page is refused
 * the project status. Screenshots: {@code e2e/target/inspector-*.png}.
 *
 * <p>The status endpoint on its own: no key 401, a user's key 403, a service key sees its own
 * project only (another project's service key does not see this one's quarantine).
 */
class InspectorPageE2EIT {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Duration T = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String CHANNEL = "inspect-room";
    private static E2eStack stack;
    private static String other;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        assertThat(Files.isExecutable(CHROMIUM))
                .as("Debian chromium is installed (scripts/stack.sh install)")
                .isTrue();
        stack = E2eStack.startDefault(1);
        other = UUID.randomUUID().toString();
        stack.createProject(other);
        stack.awaitRealtimeSchema(T);
        stack.createEnabledTable("messages_feed", "(id bigserial PRIMARY KEY, body text NOT NULL)");
        String rs = stack.realtimeSchema();
        stack.sql(
                "GRANT SELECT ON " + stack.table("messages_feed") + " TO aura_anon, aura_authenticated",
                // Supabase's usual private-channel policies: signed-in users read and write the room
                "CREATE POLICY room_read ON " + rs + ".messages FOR SELECT TO aura_authenticated" + " USING (" + rs
                        + ".topic() = '" + CHANNEL + "')",
                "CREATE POLICY room_write ON " + rs + ".messages FOR INSERT TO aura_authenticated" + " WITH CHECK ("
                        + rs + ".topic() = '" + CHANNEL + "')",
                // one change this project's quarantine keeps: a topic too long for a NATS subject
                "SELECT " + rs + ".send('{}'::jsonb, 'long-topic', 't" + "\u00e9".repeat(1_399) + "', true)");
    }

    @AfterAll
    static void stop() {
        if (stack != null) {
            stack.close();
        }
    }

    private HttpResponse<String> status(String apikey) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + stack.wsPort(0) + "/inspector/status"))
                .timeout(T);
        if (apikey != null) {
            b.header("apikey", apikey);
        }
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theStatusIsOnlyForAServiceKeyAndOnlyOfItsOwnProject() throws Exception {
        assertThat(status(null).statusCode()).isEqualTo(401);
        HttpResponse<String> user = status(stack.tokens.authenticated(stack.projectId, "u-1"));
        assertThat(user.statusCode()).isEqualTo(403);
        assertThat(user.body()).contains("service_role").doesNotContain("quarantine");
        assertThat(status(stack.tokens.anon(stack.projectId)).statusCode()).isEqualTo(403);
        assertThat(status("not-a-key").statusCode()).isEqualTo(401);

        // a ws-front started after the worker's last status hears the next heartbeat (5 s)
        Awaitility.await("project A's quarantined change and a CDC status in its status")
                .atMost(T)
                .until(() -> {
                    JsonNode s = JSON.readTree(
                            status(stack.tokens.serviceRole(stack.projectId)).body());
                    return s.path("quarantine").path("changes").asLong() >= 1
                            && s.path("cdc").path("status_age_ms").asLong() >= 0;
                });
        JsonNode mine =
                JSON.readTree(status(stack.tokens.serviceRole(stack.projectId)).body());
        assertThat(mine.path("project").asText()).isEqualTo(stack.projectId);
        assertThat(mine.path("cdc").path("cdc_active").asBoolean())
                .as(mine.toString())
                .isTrue();
        assertThat(mine.path("cdc").path("slot_lag_bytes").isNumber())
                .as(mine.toString())
                .isTrue();
        assertThat(mine.toString()).doesNotContain("long-topic").doesNotContain("\u00e9\u00e9");

        HttpResponse<String> theirs = status(stack.tokens.serviceRole(other));
        assertThat(theirs.statusCode()).isEqualTo(200);
        JsonNode b = JSON.readTree(theirs.body());
        assertThat(b.path("project").asText()).isEqualTo(other);
        assertThat(b.path("quarantine").path("changes").asLong()).isZero();
        assertThat(theirs.body()).doesNotContain(stack.projectId);
    }

    @Test
    void aServicePageAndAUserPageWatchOnePrivateChannelLive() throws Exception {
        Path root = Jars.repoRoot();
        String body = "inspected row " + UUID.randomUUID();
        ProcessBuilder pb = new ProcessBuilder(
                        System.getenv().getOrDefault("NODE_BIN", "node"), "e2e/js/inspector-page.mjs")
                .directory(root.toFile())
                .redirectErrorStream(true);
        var env = pb.environment();
        env.put("INSPECTOR_URL", "http://127.0.0.1:" + stack.wsPort(0) + "/inspector");
        env.put("SERVICE_KEY", stack.tokens.serviceRole(stack.projectId));
        env.put("ANON_KEY", stack.tokens.anon(stack.projectId));
        env.put(
                "USER_TOKEN",
                stack.tokens.authenticated(stack.projectId, UUID.randomUUID().toString()));
        env.put("CHANNEL", CHANNEL);
        env.put("TABLE", "messages_feed");
        env.put("ROW_BODY", body);
        env.put("SHOTS_DIR", root.resolve("e2e/target").toString());
        Process node = pb.start();
        List<String> output = new CopyOnWriteArrayList<>();
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(node.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                output.add(line);
                if (line.equals("READY")) {
                    stack.sql("INSERT INTO " + stack.table("messages_feed") + "(body) VALUES ('" + body + "')");
                }
            }
        } finally {
            if (!node.waitFor(180, TimeUnit.SECONDS)) {
                node.destroyForcibly();
            }
        }
        String all = String.join("\n", output);
        assertThat(node.exitValue()).as(all).isZero();
        assertThat(output).contains("READY", "INSPECTOR OK");
        // ROW <commit LSN>:<ordinal> <latency ms>: the event id as the worker gave it, a latency measured
        assertThat(line(output, "ROW ")).matches("ROW [0-9A-F]+/[0-9A-F]+:\\d+ \\d+");
        String eventId = line(output, "ROW ").split(" ")[1];
        assertThat(line(output, "PUBLIC ROW ")).isEqualTo("PUBLIC ROW " + eventId);
        assertThat(line(output, "BROADCAST ")).matches("BROADCAST \\d+");
        assertThat(line(output, "STATUS ")).matches("STATUS [2-9]\\d* \\(here \\d+\\) \\| [1-9]\\d* \\(.*");
        assertThat(line(output, "USER STATUS ")).contains("service_role");
        assertThat(root.resolve("e2e/target/inspector-service-key.png")).exists();
        assertThat(root.resolve("e2e/target/inspector-user-token.png")).exists();
        assertThat(root.resolve("e2e/target/inspector-public-anon.png")).exists();
    }

    private static String line(List<String> output, String prefix) {
        return output.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse("(no " + prefix.trim() + " line)");
    }
}
