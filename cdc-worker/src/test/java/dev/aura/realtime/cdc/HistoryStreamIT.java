package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.ChangeHistory;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The per-project history streams of postgres_changes resume (docs/design.md R): a project with
 * resume on (no row, or {@code postgres_changes_resume_seconds} NULL, means the operator's
 * default window, 120 s here; shipped as 0) gets a stream holding its change events (and only its own), bounded by its
 * history bytes; switching resume off (0) deletes it; a project with resume off gets none.
 */
class HistoryStreamIT {
    private static CdcFixture fx;
    private static final String OTHER = UUID.randomUUID().toString();
    private static final String OTHER_SCHEMA = "project_" + OTHER.replace('-', '_');

    @BeforeAll
    static void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        fx.startWorker(Map.of(
                "AURA_HISTORY_REFRESH_MS",
                "200",
                "AURA_HISTORY_STORAGE",
                "memory",
                "AURA_RESUME_DEFAULT_SECONDS",
                "120"));
        fx.createProject();
        fx.sql(
                "CREATE TABLE " + fx.table("todos") + "(id int PRIMARY KEY, title text)",
                "CREATE SCHEMA \"" + OTHER_SCHEMA + "\"",
                "INSERT INTO aura_platform.projects(project_id, schema_name) VALUES ('" + OTHER + "', '" + OTHER_SCHEMA
                        + "')",
                "CREATE TABLE \"" + OTHER_SCHEMA + "\".todos(id int PRIMARY KEY, title text)",
                "INSERT INTO aura_platform.realtime_tables(project_id, table_name) VALUES ('" + OTHER + "', 'todos')",
                "INSERT INTO aura_platform.project_limits(project_id, postgres_changes_resume_seconds) VALUES ('"
                        + OTHER + "', 0)");
        fx.enable("todos");
        fx.awaitCaptured("todos");
        fx.subscribe("todos", "*", null);
        fx.subscribeAs(OTHER, "todos", "*", null, "service_role", null);
    }

    @AfterAll
    static void tearDown() throws Exception {
        fx.sql("DELETE FROM aura_platform.project_limits WHERE project_id IN ('" + fx.projectId + "', '" + OTHER
                + "')");
        fx.close();
    }

    @Test
    void anOptedInProjectsEventsAreStoredInItsOwnStreamAndOthersAreNot() throws Exception {
        JetStreamManagement jsm = fx.nats.jetStreamManagement();
        String stream = ChangeHistory.streamName(fx.projectId);
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> streamExists(jsm, stream));
        assertThat(jsm.getStreamInfo(stream).getConfiguration().getMaxAge())
                .as("the operator's default: its 120 s window plus a minute")
                .isEqualTo(Duration.ofSeconds(180));
        fx.sql("INSERT INTO aura_platform.project_limits(project_id, postgres_changes_resume_seconds,"
                + " postgres_changes_history_bytes) VALUES ('" + fx.projectId + "', 30, 1048576)");
        Awaitility.await()
                .atMost(Duration.ofSeconds(10))
                .until(() -> jsm.getStreamInfo(stream).getConfiguration().getMaxBytes() == 1048576);
        Thread.sleep(500); // the publisher's set is narrowed/widened with the stream
        StreamInfo info = jsm.getStreamInfo(stream);
        assertThat(info.getConfiguration().getMaxBytes()).isEqualTo(1048576);
        assertThat(info.getConfiguration().getMaxAge()).isEqualTo(Duration.ofSeconds(90));
        assertThat(info.getConfiguration().getSubjects()).containsExactly(Subjects.CHANGES + "." + fx.projectId + ".>");

        fx.sql(
                "INSERT INTO " + fx.table("todos") + " VALUES (1, 'a'), (2, 'b')",
                "INSERT INTO \"" + OTHER_SCHEMA + "\".todos VALUES (1, 'x')");
        fx.awaitSettled(); // the slot advanced: the stream acknowledged the events before
        List<MessageInfo> stored = all(jsm, stream);
        assertThat(stored).hasSize(2);
        for (MessageInfo m : stored) {
            assertThat(m.getSubject()).isEqualTo(Subjects.changes(fx.projectId, "todos"));
            assertThat(m.getHeaders().getFirst(AuraHeaders.EVENT_ID)).isNotBlank();
        }
        assertThat(streamExists(jsm, ChangeHistory.streamName(OTHER))).isFalse();
        // core subscribers received the events as before
        assertThat(fx.received.stream().filter(r -> r.subject().equals(Subjects.changes(fx.projectId, "todos"))))
                .hasSize(2);

        fx.sql("UPDATE aura_platform.project_limits SET postgres_changes_resume_seconds = 0 WHERE project_id = '"
                + fx.projectId + "'");
        Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> !streamExists(jsm, stream));
        fx.sql("INSERT INTO " + fx.table("todos") + " VALUES (3, 'c')");
        fx.awaitSettled(); // resume off again: the plain core publish path
        assertThat(fx.received.stream().filter(r -> r.subject().equals(Subjects.changes(fx.projectId, "todos"))))
                .hasSize(3);
    }

    private static boolean streamExists(JetStreamManagement jsm, String name) throws Exception {
        try {
            jsm.getStreamInfo(name);
            return true;
        } catch (JetStreamApiException e) {
            return false;
        }
    }

    private static List<MessageInfo> all(JetStreamManagement jsm, String stream) throws Exception {
        StreamInfo info = jsm.getStreamInfo(stream);
        List<MessageInfo> out = new ArrayList<>();
        for (long seq = info.getStreamState().getFirstSequence();
                seq <= info.getStreamState().getLastSequence();
                seq++) {
            MessageInfo m = jsm.getMessage(stream, seq);
            if (m.getHeaders() != null && m.getHeaders().getFirst(AuraHeaders.EVENT_ID) != null) {
                out.add(m); // the fixture's settle marks share the change subjects; events only
            }
        }
        return out;
    }
}
