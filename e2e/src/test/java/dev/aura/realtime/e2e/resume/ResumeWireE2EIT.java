package dev.aura.realtime.e2e.resume;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.e2e.E2eStack;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * postgres_changes resume on the wire (docs/design.md R), with a raw Phoenix vsn 1.0.0 socket
 * against the real cdc-worker and ws-front jars: a socket that drops and rejoins the same topic
 * with the same bindings and identity gets the changes committed meanwhile, once each and in
 * order, then live ones; another user's rows hidden by RLS are not replayed; after the window it
 * gets {@code ResumeNotPossible}. (The realtime-js end-to-end tests are issue 27's e2e suite.)
 */
class ResumeWireE2EIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WAIT = Duration.ofSeconds(15);
    private static E2eStack stack;

    @BeforeAll
    static void start() throws InterruptedException {
        // the worker re-reads the opted-in projects every 200 ms (AURA_HISTORY_REFRESH_MS)
        stack = E2eStack.start(
                dev.aura.realtime.testkit.PostgresServer.shared(),
                dev.aura.realtime.testkit.NatsServer.shared(),
                0,
                Map.of("AURA_HISTORY_REFRESH_MS", "200"));
        stack.startWsFront(Map.of("PROJECT_LIMITS_REFRESH_MS", "200"));
        stack.createEnabledTable("items", "(id int PRIMARY KEY, owner uuid, v text)");
        stack.sql(
                "ALTER TABLE " + stack.table("items") + " ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY own ON " + stack.table("items") + " FOR SELECT USING (owner = auth.uid())",
                "GRANT SELECT ON " + stack.table("items") + " TO aura_authenticated",
                "INSERT INTO aura_platform.project_limits(project_id, postgres_changes_resume_seconds)" + " VALUES ('"
                        + stack.projectId + "', 60)");
        Thread.sleep(1500); // its history stream exists before any test commits
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    /** A raw socket collecting every frame. */
    static final class Socket implements WebSocket.Listener, AutoCloseable {
        final BlockingQueue<JsonNode> frames = new LinkedBlockingQueue<>();
        private final StringBuilder partial = new StringBuilder();
        final WebSocket ws;

        Socket(String token) throws Exception {
            this(token, 0);
        }

        Socket(String token, int replica) throws Exception {
            ws = HttpClient.newHttpClient()
                    .newWebSocketBuilder()
                    .buildAsync(URI.create(stack.wsUrl(replica) + "/websocket?apikey=" + token + "&vsn=1.0.0"), this)
                    .get(30, TimeUnit.SECONDS);
        }

        @Override
        public CompletionStage<?> onText(WebSocket w, CharSequence data, boolean last) {
            partial.append(data);
            if (last) {
                try {
                    frames.add(JSON.readTree(partial.toString()));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                partial.setLength(0);
            }
            w.request(1);
            return null;
        }

        void join(String topic, String options, String token) {
            ws.sendText(
                    "{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":{"
                            + "\"postgres_changes\":[{\"event\":\"*\",\"schema\":\"public\",\"table\":\"items\"}],"
                            + "\"postgres_changes_options\":" + options + "},\"access_token\":\"" + token
                            + "\"},\"ref\":\"1\",\"join_ref\":\"1\"}",
                    true);
        }

        JsonNode await(Predicate<JsonNode> match) throws InterruptedException {
            long end = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() < end) {
                JsonNode f = frames.poll(100, TimeUnit.MILLISECONDS);
                if (f != null && match.test(f)) {
                    return f;
                }
            }
            throw new AssertionError("no matching frame within " + WAIT);
        }

        /** Every postgres_changes row id received until {@code n} arrived or the wait ended. */
        List<Integer> changes(int n) throws InterruptedException {
            return records(n).stream().map(r -> r.path("id").asInt()).toList();
        }

        /** Every postgres_changes {@code record} received until {@code n} arrived (0: for a second). */
        List<JsonNode> records(int n) throws InterruptedException {
            List<JsonNode> records = new ArrayList<>();
            long end = System.nanoTime() + (n == 0 ? 1_000_000_000L : WAIT.toNanos());
            while ((n == 0 || records.size() < n) && System.nanoTime() < end) {
                JsonNode f = frames.poll(100, TimeUnit.MILLISECONDS);
                if (f != null && "postgres_changes".equals(f.path("event").asText())) {
                    records.add(f.path("payload").path("data").path("record"));
                }
            }
            return records;
        }

        @Override
        public void close() {
            ws.abort(); // as a dropped network or a killed tab: no close handshake
        }
    }

    private static boolean subscribed(JsonNode f) {
        return "system".equals(f.path("event").asText())
                && f.path("payload").path("message").asText().contains("PostgreSQL");
    }

    private static void insert(int id, String owner) {
        stack.sql("INSERT INTO " + stack.table("items") + " VALUES (" + id + ", '" + owner + "', 'v')");
    }

    @Test
    void aRejoinGetsTheChangesOfTheGapOnceInOrderAndNoneOfAnotherUsers() throws Exception {
        String me = "11111111-1111-1111-1111-111111111111";
        String other = "22222222-2222-2222-2222-222222222222";
        String token = stack.tokens.authenticated(stack.projectId, me);
        String topic = "realtime:resume-gap";
        try (Socket first = new Socket(token)) {
            first.join(topic, "{}", token);
            first.await(ResumeWireE2EIT::subscribed);
            insert(1, me);
            assertThat(first.changes(1)).containsExactly(1);
        }
        Thread.sleep(300); // the server notices the abort and parks the channel
        insert(2, me);
        insert(3, other); // hidden by RLS: never replayed
        insert(4, me);
        try (Socket second = new Socket(token)) {
            second.join(topic, "{\"event_id\":true}", token);
            second.await(ResumeWireE2EIT::subscribed);
            insert(5, me);
            List<JsonNode> got = second.records(3);
            assertThat(got.stream().map(r -> r.path("id").asInt())).containsExactly(2, 4, 5);
            assertThat(got)
                    .allSatisfy(
                            r -> assertThat(r.path("_aura_event_id").asText()).matches("[0-9A-F]+/[0-9A-F]+:[0-9]+"));
            assertThat(second.changes(0)).as("nothing more, no duplicate").isEmpty();
        }
    }

    /**
     * realtime-js 2.119.2 puts {@code access_token} into the join only when its async
     * {@code accessToken} callback already resolved; otherwise the join is authorised by the apikey
     * (no {@code sub}) and the user's token follows as an {@code access_token} push. The channel
     * becomes resumable then: a drop and a rejoin with the user's token replays the gap.
     */
    @Test
    void aChannelJoinedWithTheApikeyResumesOnceTheUserTokenArrives() throws Exception {
        String me = "66666666-6666-6666-6666-666666666666";
        String other = "77777777-7777-7777-7777-777777777777";
        String anon = stack.tokens.anon(stack.projectId);
        String token = stack.tokens.authenticated(stack.projectId, me);
        String topic = "realtime:resume-late-token";
        try (Socket first = new Socket(anon)) {
            first.ws.sendText(
                    "{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":{"
                            + "\"postgres_changes\":[{\"event\":\"*\",\"schema\":\"public\",\"table\":\"items\"}],"
                            + "\"postgres_changes_options\":{}}},\"ref\":\"1\",\"join_ref\":\"1\"}",
                    true);
            first.await(ResumeWireE2EIT::subscribed);
            first.ws.sendText(
                    "{\"topic\":\"" + topic + "\",\"event\":\"access_token\",\"payload\":{\"access_token\":\"" + token
                            + "\"},\"ref\":\"2\",\"join_ref\":\"1\"}",
                    true);
            Thread.sleep(500); // the entries are re-put with the user's claims, the record is claimed
            insert(41, me); // visible to the user only (RLS): proves the new claims
            assertThat(first.changes(1)).containsExactly(41);
            Thread.sleep(300); // the record names 41
        }
        Thread.sleep(300); // the server notices the abort and parks the channel
        insert(42, me);
        insert(43, other); // hidden by RLS: never replayed
        insert(44, me);
        try (Socket second = new Socket(anon)) {
            second.join(topic, "{}", token);
            second.await(ResumeWireE2EIT::subscribed);
            insert(45, me);
            assertThat(second.changes(3)).containsExactly(42, 44, 45);
            assertThat(second.changes(0)).as("nothing more, no duplicate").isEmpty();
        }
    }

    @Test
    void aClientOfAKilledReplicaResumesOnAnotherOne() throws Exception {
        int doomed = stack.startWsFront(Map.of("PROJECT_LIMITS_REFRESH_MS", "200"));
        String me = "55555555-5555-5555-5555-555555555555";
        String token = stack.tokens.authenticated(stack.projectId, me);
        String topic = "realtime:resume-kill";
        Socket first = new Socket(token, doomed);
        first.join(topic, "{}", token);
        first.await(ResumeWireE2EIT::subscribed);
        insert(20, me);
        assertThat(first.changes(1)).containsExactly(20);
        Thread.sleep(300); // the record names 20 (written after the socket write, coalesced)
        stack.wsFront(doomed).kill9(); // no parking: the record and entries stay as they were
        insert(21, me);
        insert(22, me);
        try (Socket second = new Socket(token, 0)) {
            second.join(topic, "{}", token);
            second.await(ResumeWireE2EIT::subscribed);
            insert(23, me);
            assertThat(second.changes(3)).containsExactly(21, 22, 23);
            assertThat(second.changes(0)).as("nothing more, no duplicate").isEmpty();
        } finally {
            first.ws.abort();
        }
    }

    @Test
    void sinceReplaysFromAnEarlierEventAndOtherBindingsAreToldToRefetch() throws Exception {
        String me = "44444444-4444-4444-4444-444444444444";
        String token = stack.tokens.authenticated(stack.projectId, me);
        String topic = "realtime:resume-since";
        List<JsonNode> first3;
        try (Socket first = new Socket(token)) {
            first.join(topic, "{\"event_id\":true}", token);
            first.await(ResumeWireE2EIT::subscribed);
            insert(10, me);
            insert(11, me);
            insert(12, me);
            first3 = first.records(3);
            assertThat(first3).hasSize(3);
        }
        Thread.sleep(300);
        String since = first3.get(0).path("_aura_event_id").asText();
        try (Socket second = new Socket(token)) {
            second.join(topic, "{\"event_id\":true,\"since\":\"" + since + "\"}", token);
            second.await(ResumeWireE2EIT::subscribed);
            assertThat(second.changes(2)).containsExactly(11, 12);
            assertThat(second.changes(0)).as("nothing more").isEmpty();
        }
        Thread.sleep(300);
        try (Socket third = new Socket(token)) {
            third.ws.sendText(
                    "{\"topic\":\"" + topic + "\",\"event\":\"phx_join\",\"payload\":{\"config\":{"
                            + "\"postgres_changes\":[{\"event\":\"INSERT\",\"schema\":\"public\",\"table\":\"items\"}]},"
                            + "\"access_token\":\"" + token + "\"},\"ref\":\"1\",\"join_ref\":\"1\"}",
                    true);
            third.await(ResumeWireE2EIT::subscribed);
            JsonNode notPossible = third.await(f ->
                    "ResumeNotPossible".equals(f.path("payload").path("code").asText()));
            assertThat(notPossible.path("payload").path("reason").asText()).isEqualTo("bindings_changed");
        }
    }

    @Test
    void aRejoinAfterTheWindowIsToldToRefetch() throws Exception {
        // a project of its own with a 1 s window, so no other test sees it
        String project = java.util.UUID.randomUUID().toString();
        stack.createProject(project);
        stack.createEnabledTable(project, "items", "(id int PRIMARY KEY, owner uuid, v text)");
        stack.sql("INSERT INTO aura_platform.project_limits(project_id, postgres_changes_resume_seconds)" + " VALUES ('"
                + project + "', 1)");
        String token = stack.tokens.authenticated(project, "33333333-3333-3333-3333-333333333333");
        String topic = "realtime:resume-late";
        try (Socket first = new Socket(token)) {
            first.join(topic, "{}", token);
            first.await(ResumeWireE2EIT::subscribed);
        }
        Thread.sleep(2500);
        try (Socket second = new Socket(token)) {
            second.join(topic, "{}", token);
            second.await(ResumeWireE2EIT::subscribed);
            JsonNode notPossible = second.await(f -> "system"
                            .equals(f.path("event").asText())
                    && "ResumeNotPossible".equals(f.path("payload").path("code").asText()));
            assertThat(notPossible.path("payload").path("reason").asText()).isEqualTo("window_exceeded");
            assertThat(notPossible.path("payload").path("status").asText()).isEqualTo("ok");
        }
    }
}
