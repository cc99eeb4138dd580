package dev.aura.realtime.e2e.resume;

import static dev.aura.realtime.e2e.resume.ResumeStack.CHANNEL;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * Issue 38's "must show": with an operator default window ({@code AURA_RESUME_DEFAULT_SECONDS},
 * 120 s in {@link ResumeStack}; shipped as 0, docs/design.md R says why) a project with no settings
 * (no row in {@code aura_platform.project_limits}) resumes; realtime-js 2.119.1 with no resume options, a signed-in
 * user listening to every event of two tables. One writer commits INSERTs, UPDATEs and DELETEs on
 * both tables, one statement per transaction, every 20 ms, while the client's ws-front is killed
 * with {@code kill -9} and started again. The client must receive every change once, in commit
 * order.
 */
class ResumeByDefaultE2EIT {
    /** One committed change: its table, its event type and the row's id. */
    record Op(String table, String type, int id) {
        static Op of(JsonNode payload) {
            JsonNode row =
                    "DELETE".equals(payload.path("eventType").asText()) ? payload.path("old") : payload.path("new");
            return new Op(
                    payload.path("table").asText(),
                    payload.path("eventType").asText(),
                    row.path("id").asInt());
        }
    }

    @Test
    void aClientWithNoResumeOptionsInAProjectWithNoSettingsLosesNothingAcrossAKill() throws Exception {
        try (ResumeStack s = ResumeStack.start(null, "(id int PRIMARY KEY, v text)")) {
            s.stack.createEnabledTable("u", "(id int PRIMARY KEY, v text)");
            assertThat(s.stack.pg.queryOne("SELECT count(*) FROM aura_platform.project_limits WHERE project_id = '"
                            + s.stack.projectId + "'"))
                    .as("no settings")
                    .isEqualTo("0");
            try (RealtimeJsClient js = client(s);
                    Writer writer = new Writer(s)) {
                writer.awaitMore(100);
                int mark = js.eventCount();
                s.stack.wsFront(0).kill9();
                int atKill = writer.count();
                s.stack.restartWsFront(0, Map.of());
                ResumeStack.awaitRejoin(js, mark, Duration.ofSeconds(30));
                int atRejoin = writer.count();
                writer.awaitMore(100);
                List<Op> committed = writer.stop();

                Waits.until(
                        "every committed change at the client",
                        Duration.ofSeconds(20),
                        Duration.ofMillis(100),
                        () -> received(js).size() >= committed.size(),
                        () -> received(js).size() + " of " + committed.size());
                Thread.sleep(1000); // duplicates, if any, arrive
                List<Op> got = received(js);
                assertThat(got)
                        .as(
                                "every change once, in commit order (%d committed, %d while away)\n%s",
                                committed.size(), atRejoin - atKill, s.logs())
                        .isEqualTo(committed);
                assertThat(Deliveries.resumeNotPossible(js, CHANNEL)).isEmpty();
                long types = committed.stream().map(Op::type).distinct().count();
                long tables = committed.stream().map(Op::table).distinct().count();
                System.out.printf(
                        "resume by default: %d changes (%d kinds on %d tables), %d committed between the kill and"
                                + " the rejoin; the client received each once, in order%n",
                        committed.size(), types, tables, atRejoin - atKill);
                assertThat(types).isEqualTo(3);
                assertThat(tables).isEqualTo(2);
            }
        }
    }

    private static RealtimeJsClient client(ResumeStack s) {
        RealtimeJsClient js = RealtimeJsClient.start();
        try {
            js.connect(
                    s.stack.wsUrl(0),
                    s.stack.tokens.anon(s.stack.projectId),
                    "2.0.0",
                    Map.of(
                            "accessToken",
                            s.stack.tokens.authenticated(
                                    s.stack.projectId, UUID.randomUUID().toString())));
            js.channel(CHANNEL, Map.of());
            js.onPostgresChanges(CHANNEL, Map.of("event", "*", "schema", "public", "table", "t"));
            js.onPostgresChanges(CHANNEL, Map.of("event", "*", "schema", "public", "table", "u"));
            js.onSystem(CHANNEL);
            int mark = js.eventCount();
            js.subscribeAndAwait(CHANNEL, ResumeStack.T);
            ResumeStack.awaitSubscribedToPostgres(js, mark);
            return js;
        } catch (RuntimeException | Error e) {
            js.close();
            throw e;
        }
    }

    /** The changes the channel's callbacks received, in order. */
    private static List<Op> received(RealtimeJsClient js) {
        List<Op> out = new ArrayList<>();
        for (JsonNode e : js.events()) {
            if ("postgres_changes".equals(e.path("type").asText())
                    && CHANNEL.equals(e.path("channel").asText())) {
                out.add(Op.of(e.path("payload")));
            }
        }
        return out;
    }

    /**
     * One thread committing, every 20 ms, the next of: INSERT into t, INSERT into u, UPDATE of an
     * earlier row of t, DELETE of an earlier row of u (each row is inserted, updated and deleted at
     * most once, so a change names its operation). Being the only writer, its order is the commit order.
     */
    private static final class Writer implements AutoCloseable {
        private final List<Op> committed = new ArrayList<>();
        private final Thread thread;
        private volatile boolean running = true;
        private volatile Exception failure;

        Writer(ResumeStack s) {
            String t = s.table();
            String u = s.stack.table("u");
            thread = Thread.ofPlatform().name("resume-default-writer").daemon().start(() -> {
                try (Connection c = s.stack.pg.connect();
                        Statement st = c.createStatement()) {
                    for (int n = 0; running; n++) {
                        int id = n / 4 + 1;
                        Op op = switch (n % 4) {
                            case 0 ->
                                exec(st, "INSERT INTO " + t + " VALUES (" + id + ", 'a')", new Op("t", "INSERT", id));
                            case 1 ->
                                exec(st, "INSERT INTO " + u + " VALUES (" + id + ", 'a')", new Op("u", "INSERT", id));
                            case 2 ->
                                exec(st, "UPDATE " + t + " SET v = 'b' WHERE id = " + id, new Op("t", "UPDATE", id));
                            default -> exec(st, "DELETE FROM " + u + " WHERE id = " + id, new Op("u", "DELETE", id));
                        };
                        synchronized (committed) {
                            committed.add(op);
                        }
                        Thread.sleep(20);
                    }
                } catch (Exception e) {
                    failure = e;
                }
            });
        }

        private static Op exec(Statement st, String sql, Op op) throws Exception {
            st.execute(sql);
            return op;
        }

        int count() {
            synchronized (committed) {
                return committed.size();
            }
        }

        void awaitMore(int n) {
            int target = count() + n;
            Waits.until(
                    target + " committed changes",
                    Duration.ofSeconds(30),
                    Duration.ofMillis(20),
                    () -> {
                        if (failure != null) {
                            throw new AssertionError("the writer failed", failure);
                        }
                        return count() >= target;
                    },
                    () -> count() + " committed");
        }

        List<Op> stop() throws InterruptedException {
            running = false;
            thread.join(10_000);
            if (failure != null) {
                throw new AssertionError("the writer failed", failure);
            }
            synchronized (committed) {
                return List.copyOf(committed);
            }
        }

        @Override
        public void close() throws InterruptedException {
            running = false;
            thread.join(10_000);
        }
    }
}
