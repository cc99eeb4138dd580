package dev.aura.realtime.e2e.resume;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.e2e.E2eStack;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import dev.aura.realtime.testkit.RealtimeJsClient;
import dev.aura.realtime.testkit.Waits;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Issue 27's setting: a cdc-worker, two ws-front replicas on a nats-server of their own (the
 * history streams and the {@code aura_resume} bucket start empty), one project with table
 * {@code t} and, when asked, its own postgres_changes resume window in its limits row (else the
 * operator default: on, 120 s; issue 38).
 */
final class ResumeStack implements AutoCloseable {
    static final Duration T = Duration.ofSeconds(20);
    static final String CHANNEL = "db";

    final NatsServer nats;
    final E2eStack stack;

    private ResumeStack(NatsServer nats, E2eStack stack) {
        this.nats = nats;
        this.stack = stack;
    }

    /**
     * Starts everything; {@code resumeSeconds} null leaves the project without a limits row (resume
     * on with the operator's default window, set to 120 s here), 0 turns resume off. {@code setup} runs after table {@code t} ({@code columns}) is created and
     * enabled ({@code {t}} in it stands for the table's quoted name), before the replicas start (a
     * replica reads the limits on its first connection).
     */
    static ResumeStack start(Integer resumeSeconds, String columns, String... setup) {
        return start(resumeSeconds, columns, Map.of(), setup);
    }

    /** {@link #start(Integer, String, String...)} with {@code frontEnv} added to both replicas' environment. */
    static ResumeStack start(Integer resumeSeconds, String columns, Map<String, String> frontEnv, String... setup) {
        NatsServer nats = NatsServer.start();
        E2eStack stack = new E2eStack(PostgresServer.shared(), nats);
        ResumeStack s = new ResumeStack(nats, stack);
        try {
            // null: the project sets no window, and this stack's operator default is 120 s (the
            // shipped default is 0, resume off: docs/design.md R)
            stack.startCdcWorker(
                    resumeSeconds == null ? Map.of("AURA_RESUME_DEFAULT_SECONDS", "120") : Map.of(), List.of());
            stack.createProject();
            if (resumeSeconds != null) {
                setWindow(stack, resumeSeconds);
            }
            stack.createEnabledTable("t", columns);
            for (String sql : setup) {
                stack.sql(sql.replace("{t}", stack.table("t")));
            }
            stack.startWsFront(frontEnv);
            stack.startWsFront(frontEnv);
            if (resumeSeconds == null || resumeSeconds > 0) {
                s.awaitHistoryStream(stack.projectId);
            }
            return s;
        } catch (RuntimeException | Error e) {
            s.close();
            throw e;
        }
    }

    /** Sets the project's resume window (0 = off) in {@code aura_platform.project_limits}. */
    static void setWindow(E2eStack stack, int seconds) {
        stack.sql("INSERT INTO aura_platform.project_limits(project_id, postgres_changes_resume_seconds) VALUES ('"
                + stack.projectId + "', " + seconds + ") ON CONFLICT (project_id) DO UPDATE SET"
                + " postgres_changes_resume_seconds = EXCLUDED.postgres_changes_resume_seconds");
    }

    String table() {
        return stack.table("t");
    }

    /**
     * realtime-js 2.119.2 connected to {@code url} as user {@code sub} (an authenticated access
     * token), channel {@value #CHANNEL} with {@code config} listening to INSERTs on {@code t} and
     * to system messages, subscribed and told "Subscribed to PostgreSQL".
     */
    RealtimeJsClient client(String url, String sub, Map<String, ?> config) {
        return client(url, stack.projectId, sub, config);
    }

    /** {@link #client(String, String, Map)} for a user of another project of this stack. */
    RealtimeJsClient client(String url, String projectId, String sub, Map<String, ?> config) {
        RealtimeJsClient js = RealtimeJsClient.start();
        try {
            js.connect(
                    url,
                    stack.tokens.anon(projectId),
                    "2.0.0",
                    Map.of("accessToken", stack.tokens.authenticated(projectId, sub)));
            js.channel(CHANNEL, config);
            js.onPostgresChanges(CHANNEL, Map.of("event", "INSERT", "schema", "public", "table", "t"));
            js.onSystem(CHANNEL);
            int mark = js.eventCount();
            js.subscribeAndAwait(CHANNEL, T);
            awaitSubscribedToPostgres(js, mark);
            return js;
        } catch (RuntimeException | Error e) {
            js.close();
            throw e;
        }
    }

    /**
     * realtime-js 2.119.1 connected to {@code url} with {@code apikey} alone (no {@code accessToken}:
     * the joins carry the apikey's claims, as a backend with the service key or an app with the
     * anon key connects), channel {@value #CHANNEL} with {@code config} listening to INSERTs on
     * {@code t} and to system messages, subscribed and told "Subscribed to PostgreSQL".
     */
    RealtimeJsClient keyClient(String url, String apikey, Map<String, ?> config) {
        RealtimeJsClient js = RealtimeJsClient.start();
        try {
            js.connect(url, apikey, "2.0.0", Map.of());
            js.channel(CHANNEL, config);
            js.onPostgresChanges(CHANNEL, Map.of("event", "INSERT", "schema", "public", "table", "t"));
            js.onSystem(CHANNEL);
            int mark = js.eventCount();
            js.subscribeAndAwait(CHANNEL, T);
            awaitSubscribedToPostgres(js, mark);
            return js;
        } catch (RuntimeException | Error e) {
            js.close();
            throw e;
        }
    }

    /** Waits for the "Subscribed to PostgreSQL" system message at index {@code from} or later. */
    static JsonNode awaitSubscribedToPostgres(RealtimeJsClient js, int from) {
        return js.awaitEvent(
                from,
                e -> "system".equals(e.path("type").asText())
                        && "ok".equals(e.path("payload").path("status").asText())
                        && e.path("payload").path("message").asText().contains("Subscribed to PostgreSQL"),
                T);
    }

    /**
     * After a socket drop at event index {@code mark}: waits until realtime-js saw its socket close,
     * rejoined the channel by itself ({@code SUBSCRIBED} again) and was told "Subscribed to
     * PostgreSQL"; returns the index of that system message.
     */
    static int awaitRejoin(RealtimeJsClient js, int mark, Duration timeout) {
        int closed = js.awaitEventIndex(
                mark,
                e -> "socket".equals(e.path("type").asText())
                        && "close".equals(e.path("event").asText()),
                T);
        int subscribed = js.awaitEventIndex(
                closed,
                e -> "status".equals(e.path("type").asText())
                        && CHANNEL.equals(e.path("channel").asText())
                        && "SUBSCRIBED".equals(e.path("status").asText()),
                timeout);
        return js.awaitEventIndex(
                subscribed,
                e -> "system".equals(e.path("type").asText())
                        && e.path("payload").path("message").asText().contains("Subscribed to PostgreSQL"),
                T);
    }

    /** The design's history stream name of this project. */
    String historyStream() {
        return historyStream(stack.projectId);
    }

    static String historyStream(String projectId) {
        return "AURA_PGCHANGES_" + projectId.replace("-", "");
    }

    /**
     * Waits for the history stream of {@code projectId}: the worker creates it at its next
     * AURA_HISTORY_REFRESH_MS (5 s) after the project's first realtime table, and only changes
     * committed after that are kept for a replay.
     */
    void awaitHistoryStream(String projectId) {
        Waits.until(
                "the history stream " + historyStream(projectId),
                T,
                Duration.ofMillis(200),
                () -> streams().contains(historyStream(projectId)),
                () -> "streams " + streams() + "\n" + stack.cdcWorker().logTail(20));
    }

    /** The JetStream stream names on this stack's nats-server. */
    List<String> streams() {
        try (Connection c = nats.connect()) {
            return c.jetStreamManagement().getStreamNames();
        } catch (IOException | JetStreamApiException e) {
            throw new IllegalStateException("cannot list the JetStream streams of " + nats, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Log tails of the services, for failure messages. */
    String logs() {
        StringBuilder b = new StringBuilder("--- cdc-worker ---\n")
                .append(stack.cdcWorker().logTail(25))
                .append('\n');
        for (int i = 0; i < 2; i++) {
            b.append("--- ws-front ")
                    .append(i)
                    .append(" ---\n")
                    .append(stack.wsFront(i).logTail(25))
                    .append('\n');
        }
        return b.toString();
    }

    @Override
    public void close() {
        stack.close();
        nats.close();
    }
}
