package dev.aura.realtime.cdc;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.config.CdcSource;
import dev.aura.realtime.cdc.provision.RealtimeSchemas;
import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.testkit.NatsServer;
import dev.aura.realtime.testkit.PostgresServer;
import io.nats.client.Dispatcher;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Broadcast from Database through the row path of each slot reader (docs/design.md H2, C12):
 * rows of a project's messages table, written by {@code realtime.send} and by a trigger calling
 * {@code realtime.broadcast_changes}, are read by the same slot as every change and published on
 * the topic's messages subject in commit order, with the change id and the row's id, their
 * payloads decoded exactly from wal2json's escaped text; with {@code CDC_SOURCE=stream} (the
 * default) and {@code poll}.
 */
@ParameterizedClass(name = "CDC_SOURCE={0}")
@EnumSource(CdcSource.class)
class DatabaseBroadcastIT {
    private static final Duration T = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = WireJson.mapper();

    @Parameter
    CdcSource source;

    private CdcFixture fx;
    private Dispatcher dispatcher;
    private String rt;
    private final List<Captured> captured = new CopyOnWriteArrayList<>();

    record Captured(String subject, String eventId, DbBroadcast message) {}

    @BeforeEach
    void setUp() throws Exception {
        fx = new CdcFixture(PostgresServer.shared(), NatsServer.shared());
        dispatcher = fx.nats.createDispatcher(m -> {
            try {
                captured.add(new Captured(
                        m.getSubject(),
                        m.getHeaders().getFirst(AuraHeaders.EVENT_ID),
                        JSON.readValue(m.getData(), DbBroadcast.class)));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        dispatcher.subscribe(Subjects.MESSAGES + ".>");
        fx.nats.flush(Duration.ofSeconds(5));
        fx.startWorker(CdcSources.env(source, "CDC_TABLE_REFRESH_MS", "200"));
        fx.createProject();
        rt = "\"" + RealtimeSchemas.nameOf(fx.projectId) + "\"";
        Awaitility.await()
                .atMost(T)
                .until(() -> fx.worker().enabledTables().contains(RealtimeSchemas.nameOf(fx.projectId), "messages"));
    }

    @AfterEach
    void tearDown() throws Exception {
        fx.nats.closeDispatcher(dispatcher);
        fx.close();
    }

    @Test
    void sendAndBroadcastChangesRowsArePublishedInCommitOrderWithTheirIdsAndExactPayloads() throws Exception {
        String awkward = "é \\\"q\\\" \\\\ \\n ☃ \\u0001";
        fx.sql(
                "CREATE TABLE " + fx.table("orders") + "(id int PRIMARY KEY, note text)",
                "CREATE FUNCTION " + fx.schema + ".orders_broadcast() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                        + " PERFORM " + rt + ".broadcast_changes('orders:' || NEW.id, TG_OP, TG_OP, TG_TABLE_NAME,"
                        + " TG_TABLE_SCHEMA, NEW, OLD); RETURN NULL; END $$",
                "CREATE TRIGGER orders_broadcast AFTER INSERT OR UPDATE ON " + fx.table("orders")
                        + " FOR EACH ROW EXECUTE FUNCTION " + fx.schema + ".orders_broadcast()");
        fx.sql(
                "BEGIN",
                "SELECT " + rt + ".send('{\"n\": 1, \"s\": \"" + awkward + "\"}', 'tx', 'room:1')",
                "SELECT " + rt + ".send('{\"n\": 2}', 'tx', 'room:1', false)",
                "INSERT INTO " + fx.table("orders") + " VALUES (7, 'first ünïcode')",
                "SELECT " + rt + ".send('{\"n\": 3}', 'tx', 'room:1')",
                "COMMIT");
        fx.sql("UPDATE " + fx.table("orders") + " SET note = 'second' WHERE id = 7");

        List<Captured> got = Awaitility.await().atMost(T).until(() -> List.copyOf(captured), l -> l.size() >= 5);
        assertThat(got).hasSize(5);
        assertThat(got)
                .extracting(c -> c.message().topic())
                .containsExactly("room:1", "room:1", "orders:7", "room:1", "orders:7");
        assertThat(got.get(0).subject()).isEqualTo(Subjects.messages(fx.projectId, "room:1"));
        assertThat(got.get(2).subject()).isEqualTo(Subjects.messages(fx.projectId, "orders:7"));

        JsonNode first = got.get(0).message().payload();
        assertThat(first.path("n").asInt()).isEqualTo(1);
        assertThat(first.path("s").asText()).isEqualTo("é \"q\" \\ \n ☃ \u0001");
        assertThat(got.get(1).message().privateChannel()).isFalse();
        assertThat(got.get(0).message().privateChannel()).isTrue();

        JsonNode insert = got.get(2).message().payload();
        assertThat(got.get(2).message().event()).isEqualTo("INSERT");
        assertThat(insert.path("operation").asText()).isEqualTo("INSERT");
        assertThat(insert.path("schema").asText()).isEqualTo("public");
        assertThat(insert.path("table").asText()).isEqualTo("orders");
        assertThat(insert.path("record").path("note").asText()).isEqualTo("first ünïcode");
        assertThat(insert.path("old_record").isNull()).isTrue();
        JsonNode update = got.get(4).message().payload();
        assertThat(update.path("old_record").path("note").asText()).isEqualTo("first ünïcode");
        assertThat(update.path("record").path("note").asText()).isEqualTo("second");

        // one transaction: one commit LSN, ordinals in insertion order; the next commits later
        List<String> ids = got.stream().map(Captured::eventId).toList();
        String commit = ids.get(0).substring(0, ids.get(0).indexOf(':'));
        assertThat(ids.subList(0, 4)).allMatch(id -> id.startsWith(commit + ":"));
        assertThat(ids.subList(0, 4).stream().map(DatabaseBroadcastIT::ordinal).toList())
                .isSorted()
                .doesNotHaveDuplicates();
        assertThat(Lsn.parse(ids.get(4).substring(0, ids.get(4).indexOf(':')))).isGreaterThan(Lsn.parse(commit));

        for (Captured c : got) {
            assertThat(fx.queryOne("SELECT topic FROM " + rt + ".messages WHERE id = '"
                            + c.message().id() + "'"))
                    .as("the message carries its row's id")
                    .isEqualTo(c.message().topic());
        }
        assertThat(fx.received)
                .as("the messages table is not a postgres_changes table")
                .isEmpty();
    }

    private static long ordinal(String eventId) {
        return Long.parseLong(eventId.substring(eventId.indexOf(':') + 1));
    }
}
