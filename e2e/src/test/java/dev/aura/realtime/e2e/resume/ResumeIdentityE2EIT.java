package dev.aura.realtime.e2e.resume;

import static dev.aura.realtime.e2e.resume.ResumeStack.CHANNEL;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Issue 38 point 1: a resume record belongs to one identity. A {@code resume_key} is something an
 * app may log, share or derive from a guessable value; presenting it with another token must never
 * replay what that token may not see. Both shapes of the issue, with realtime-js 2.119.1: the
 * service key against the anon key, and two anonymous users whose claims RLS tells apart. In both
 * the record's owner, coming back with its own key, still resumes (the record was not consumed).
 */
class ResumeIdentityE2EIT {
    private static final Duration QUIET = Duration.ofSeconds(5);

    /**
     * A backend subscribed with the service key and {@code resume_key: "backend-1"} to {@code t},
     * whose RLS hides every row from {@code anon}. Its ws-front is killed (the backend is gone
     * too); a row "top secret" is committed; an app with the project's public anon key joins the
     * same topic and bindings with the same {@code resume_key} on the other replica: it must not
     * be replayed the row. The backend, back with the service key, is.
     */
    @Test
    void theAnonKeyWithTheServiceKeysResumeKeyIsNotReplayedWhatOnlyTheServiceRoleSees() throws Exception {
        Map<String, ?> config = Map.of("postgres_changes_options", Map.of("resume_key", "backend-1"));
        try (ResumeStack s =
                ResumeStack.start(60, "(id int PRIMARY KEY, v text)", "ALTER TABLE {t} ENABLE ROW LEVEL SECURITY")) {
            String serviceKey = s.stack.tokens.serviceRole(s.stack.projectId);
            try (RealtimeJsClient backend = s.keyClient(s.stack.wsUrl(0), serviceKey, config)) {
                s.stack.sql("INSERT INTO " + s.table() + " VALUES (1, 'hello')");
                backend.awaitEvent(e -> "postgres_changes".equals(e.path("type").asText()), ResumeStack.T);
                Thread.sleep(500); // the record names row 1
                s.stack.wsFront(0).kill9();
            }
            s.stack.sql("INSERT INTO " + s.table() + " VALUES (2, 'top secret')");
            try (RealtimeJsClient app = s.keyClient(s.stack.wsUrl(1), s.stack.tokens.anon(s.stack.projectId), config)) {
                Thread.sleep(QUIET.toMillis());
                assertThat(Deliveries.inserts(app, CHANNEL))
                        .as("the anon key is replayed nothing of the service role's record\n" + s.logs())
                        .isEmpty();
            }
            try (RealtimeJsClient back = s.keyClient(s.stack.wsUrl(1), serviceKey, config)) {
                List<JsonNode> rows = awaitRows(back, 1);
                assertThat(rows).extracting(r -> r.path("v").asText()).containsExactly("top secret");
                assertThat(Deliveries.resumeNotPossible(back, CHANNEL)).isEmpty();
            }
        }
    }

    /**
     * Two anonymous users (tokens without {@code sub}) whose {@code device} claim RLS reads; the
     * same {@code resume_key}. Device a's ws-front is killed, a row of device a is committed;
     * device b joining with the same key must not get it. Device a, back, does.
     */
    @Test
    void twoAnonymousUsersOfDifferentClaimsDoNotShareARecord() throws Exception {
        Map<String, ?> config = Map.of("postgres_changes_options", Map.of("resume_key", "shared-key"));
        try (ResumeStack s = ResumeStack.start(
                60,
                "(id int PRIMARY KEY, device text NOT NULL)",
                "ALTER TABLE {t} ENABLE ROW LEVEL SECURITY",
                "CREATE POLICY by_device ON {t} FOR SELECT USING (device = auth.jwt() ->> 'device')")) {
            String deviceA = device(s, "a");
            String deviceB = device(s, "b");
            try (RealtimeJsClient a = s.keyClient(s.stack.wsUrl(0), deviceA, config)) {
                s.stack.sql("INSERT INTO " + s.table() + " VALUES (1, 'a')");
                awaitRows(a, 1);
                Thread.sleep(500); // the record names row 1
                s.stack.wsFront(0).kill9();
            }
            s.stack.sql(
                    "INSERT INTO " + s.table() + " VALUES (2, 'a')", "INSERT INTO " + s.table() + " VALUES (3, 'b')");
            try (RealtimeJsClient b = s.keyClient(s.stack.wsUrl(1), deviceB, config)) {
                Thread.sleep(QUIET.toMillis());
                assertThat(Deliveries.inserts(b, CHANNEL))
                        .as("device b is replayed nothing of device a's record\n" + s.logs())
                        .isEmpty();
            }
            try (RealtimeJsClient back = s.keyClient(s.stack.wsUrl(1), deviceA, config)) {
                List<JsonNode> rows = awaitRows(back, 1);
                assertThat(rows).extracting(r -> r.path("id").asInt()).containsExactly(2);
                assertThat(Deliveries.resumeNotPossible(back, CHANNEL)).isEmpty();
            }
        }
    }

    /** An anon key of the project carrying {@code device}. */
    private static String device(ResumeStack s, String device) {
        Map<String, Object> claims = s.stack.tokens.claims("anon", s.stack.projectId);
        claims.put("device", device);
        return s.stack.tokens.withClaims(claims);
    }

    /** The INSERT records once {@code n} arrived, plus one quiet second for any more. */
    private static List<JsonNode> awaitRows(RealtimeJsClient js, int n) throws InterruptedException {
        long end = System.nanoTime() + ResumeStack.T.toNanos();
        while (Deliveries.inserts(js, CHANNEL).size() < n && System.nanoTime() < end) {
            Thread.sleep(50);
        }
        Thread.sleep(1000);
        return Deliveries.inserts(js, CHANNEL);
    }
}
