package dev.aura.realtime.cdc.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.common.wire.WireJson;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A captured messages-table row becomes a {@link DbBroadcast} (docs/design.md H2), or nothing. */
class MessageRowsTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final String PROJECT = "1f0e7a34-6f1d-4c39-9a57-0c2b8a9d0e11";
    private static final String RT = "project_1f0e7a34_6f1d_4c39_9a57_0c2b8a9d0e11_realtime";
    private static final String ID = "5b7a3f0c-1d2e-4f60-8a9b-0c1d2e3f4a5b";

    private final MessageRows rows = new MessageRows(64);

    /** A wal2json row of the messages table; a null value is left out of the columns. */
    private static RowChange row(char action, String schema, String topic, String extension, String payload) {
        List<DecodedColumn> columns = new ArrayList<>();
        if (topic != null) {
            columns.add(EventFixture.column("topic", 25, JSON.textNode(topic)));
        }
        if (extension != null) {
            columns.add(EventFixture.column("extension", 25, JSON.textNode(extension)));
        }
        columns.add(EventFixture.column("payload", 3802, payload == null ? JSON.nullNode() : JSON.textNode(payload)));
        columns.add(EventFixture.column("event", 25, JSON.textNode("INSERT")));
        columns.add(EventFixture.column("private", 16, JSON.booleanNode(true)));
        columns.add(EventFixture.column("id", 2950, JSON.textNode(ID)));
        columns.add(EventFixture.column("seq", 20, JSON.numberNode(7)));
        return EventFixture.change(
                action,
                schema,
                "messages",
                action == 'I' ? columns : List.of(),
                List.of(),
                List.of("id"),
                Lsn.parse("0/16B3748"),
                3,
                "2026-01-02T03:04:05Z");
    }

    private static JsonNode body(MessageRows.Rendered r) throws Exception {
        return WireJson.mapper().readTree(r.body());
    }

    @Test
    void anInsertedBroadcastRowIsPublishedOnItsTopicsSubjectWithTheChangeIdAndTheRowsId() throws Exception {
        MessageRows.Rendered r = rows.render(row('I', RT, "room:1/ä", "broadcast", "{\"n\": 1}"), PROJECT);

        assertThat(r.subject()).isEqualTo(Subjects.messages(PROJECT, "room:1/ä"));
        assertThat(r.eventId()).isEqualTo("0/16B3748:3");
        DbBroadcast m = WireJson.mapper().readValue(r.body(), DbBroadcast.class);
        assertThat(m.id()).isEqualTo(ID);
        assertThat(m.topic()).isEqualTo("room:1/ä");
        assertThat(m.event()).isEqualTo("INSERT");
        assertThat(m.payload().toString()).isEqualTo("{\"n\":1}");
        assertThat(m.privateChannel()).isTrue();
    }

    @Test
    void onlyRowsOfTheProjectsOwnRealtimeSchemaNamedMessagesAreMessageRows() {
        assertThat(MessageRows.isMessageRow(row('I', RT, "t", "broadcast", "{}"), PROJECT))
                .isTrue();
        assertThat(MessageRows.isMessageRow(
                        row('I', "project_1f0e7a34_6f1d_4c39_9a57_0c2b8a9d0e11", "t", "broadcast", "{}"), PROJECT))
                .as("a tenant's own table called messages")
                .isFalse();
        assertThat(MessageRows.isMessageRow(
                        row('I', RT, "t", "broadcast", "{}"), "00000000-0000-0000-0000-000000000000"))
                .as("another project's realtime schema")
                .isFalse();
    }

    @Test
    void updatesDeletesPresenceRowsAndRowsWithoutTopicAreNotMessages() throws Exception {
        assertThat(rows.render(row('U', RT, "t", "broadcast", "{}"), PROJECT)).isNull();
        assertThat(rows.render(row('D', RT, "t", "broadcast", "{}"), PROJECT)).isNull();
        assertThat(rows.render(row('T', RT, "t", "broadcast", "{}"), PROJECT)).isNull();
        assertThat(rows.render(row('I', RT, "t", "presence", "{}"), PROJECT)).isNull();
        assertThat(rows.render(row('I', RT, null, "broadcast", "{}"), PROJECT)).isNull();
    }

    @Test
    void aNullPayloadIsAnEmptyObjectAndAPayloadOverTheLimitArrivesAsError413WithTheId() throws Exception {
        assertThat(body(rows.render(row('I', RT, "t", "broadcast", null), PROJECT))
                        .path("payload")
                        .toString())
                .isEqualTo("{}");

        String big = "{\"b\": \"" + "x".repeat(100) + "\"}";
        JsonNode stub = body(rows.render(row('I', RT, "t", "broadcast", big), PROJECT));
        assertThat(stub.path("payload").toString())
                .isEqualTo("{\"error\":\"Error 413: Payload Too Large\",\"id\":\"" + ID + "\"}");
        assertThat(stub.path("id").asText()).isEqualTo(ID);
    }

    @Test
    void aPayloadPostgresCutOrAMessageOverNatsMaxPayloadArrivesAsError413WithTheId() throws Exception {
        RowChange cut = row('I', RT, "t", "broadcast", "{}");
        List<DecodedColumn> columns = new ArrayList<>(cut.columns());
        columns.replaceAll(c -> c.name().equals("payload") ? new DecodedColumn("payload", 3802, RawValue.CUT) : c);
        RowChange cutRow = EventFixture.change(
                'I', RT, "messages", columns, List.of(), List.of("id"), cut.commitLsn(), 3, cut.commitTimestamp());
        String stub = "{\"error\":\"Error 413: Payload Too Large\",\"id\":\"" + ID + "\"}";
        assertThat(body(rows.render(cutRow, PROJECT)).path("payload").toString())
                .isEqualTo(stub);

        MessageRows.Rendered overNats = rows.render(row('I', RT, "t", "broadcast", "{\"n\": 12345}"), PROJECT, 100);
        assertThat(body(overNats).path("payload").toString()).isEqualTo(stub);
        assertThat(overNats.eventId()).isEqualTo("0/16B3748:3");
    }

    @Test
    void aBinaryPayloadRowIsPublishedWithItsExactBytesAndNoJsonPayload() throws Exception {
        RowChange change = row('I', RT, "room", "broadcast", null);
        List<DecodedColumn> columns = new ArrayList<>(change.columns());
        columns.add(EventFixture.column("binary_payload", 17, JSON.textNode("\\x00ff80c328")));
        RowChange binary = EventFixture.change(
                'I',
                RT,
                "messages",
                columns,
                List.of(),
                List.of("id"),
                Lsn.parse("0/16B3748"),
                3,
                "2026-01-02T03:04:05Z");

        DbBroadcast m = WireJson.mapper().readValue(rows.render(binary, PROJECT).body(), DbBroadcast.class);

        assertThat(m.binaryPayload()).containsExactly(0, 0xff, 0x80, 0xc3, 0x28);
        assertThat(m.id()).isEqualTo(ID);
        assertThat(MessageRows.hexBytes("00ff")).containsExactly(0, 0xff);
        assertThat(MessageRows.hexBytes("\\x0")).isNull();
        assertThat(MessageRows.hexBytes("\\xzz")).isNull();
    }

    @Test
    void aBinaryPayloadOverTheLimitIsDeliveredAsError413() throws Exception {
        RowChange change = row('I', RT, "room", "broadcast", null);
        List<DecodedColumn> columns = new ArrayList<>(change.columns());
        columns.add(EventFixture.column("binary_payload", 17, JSON.textNode("\\x" + "ab".repeat(65))));
        RowChange binary = EventFixture.change(
                'I',
                RT,
                "messages",
                columns,
                List.of(),
                List.of("id"),
                Lsn.parse("0/16B3748"),
                3,
                "2026-01-02T03:04:05Z");

        JsonNode body = body(rows.render(binary, PROJECT));

        assertThat(body.path("payload").path("error").asText()).isEqualTo("Error 413: Payload Too Large");
        assertThat(body.has("binary_payload")).isFalse();
    }
}
