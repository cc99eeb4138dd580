package dev.aura.realtime.cdc.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.cdc.catalog.TypeNames;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.common.lsn.Lsn;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The postgres_changes {@code data} object built from decoded changes, without a database. */
class EventBuilderTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final long INT8 = 20;
    private static final long TEXT = 25;
    private static final Map<Long, String> TYPES = Map.of(INT8, "int8", TEXT, "text");
    private static final TypeNames NAMES = oid -> TYPES.getOrDefault(oid, "unknown");
    private final EventBuilder builder = new EventBuilder(NAMES, 1024);

    @Test
    void anInsertCarriesTheRecordTheColumnsWithTypnamesAndSchemaPublic() throws Exception {
        BuiltEvent e = builder.build(
                change(
                        'I',
                        List.of(col("id", INT8, JSON.numberNode(7)), col("body", TEXT, JSON.textNode("hi"))),
                        List.of()),
                "p1");

        JsonNode data = e.data();
        assertThat(data.get("schema").asText()).isEqualTo("public");
        assertThat(data.get("table").asText()).isEqualTo("messages");
        assertThat(data.get("type").asText()).isEqualTo("INSERT");
        assertThat(data.get("commit_timestamp").asText()).isEqualTo("2026-01-02T03:04:05Z");
        assertThat(data.get("columns").toString())
                .isEqualTo("[{\"name\":\"id\",\"type\":\"int8\"},{\"name\":\"body\",\"type\":\"text\"}]");
        assertThat(data.get("record").toString()).isEqualTo("{\"id\":7,\"body\":\"hi\"}");
        assertThat(data.has("old_record")).isFalse();
        assertThat(data.get("errors").isNull()).isTrue();
        assertThat(e.eventId()).isEqualTo("0/16B3748:3");
        assertThat(e.projectId()).isEqualTo("p1");
        assertThat(e.schemaName()).isEqualTo("project_p1");
        assertThat(e.primaryKey()).containsExactly("id");
        assertThat(e.columnTypes()).containsEntry("body", "text");
    }

    @Test
    void anUpdateFillsUnchangedToastColumnsFromTheOldRow() throws Exception {
        BuiltEvent e = builder.build(
                change(
                        'U',
                        List.of(col("id", INT8, JSON.numberNode(7))),
                        List.of(col("id", INT8, JSON.numberNode(7)), col("body", TEXT, JSON.textNode("big")))),
                "p1");

        assertThat(e.data().get("record").toString()).isEqualTo("{\"id\":7,\"body\":\"big\"}");
        assertThat(e.data().get("old_record").toString()).isEqualTo("{\"id\":7,\"body\":\"big\"}");
        assertThat(e.filterRow()).isEqualTo(e.record());
    }

    @Test
    void aDeleteHasOnlyTheOldRowAndIsFilteredByIt() throws Exception {
        BuiltEvent e = builder.build(change('D', List.of(), List.of(col("id", INT8, JSON.numberNode(7)))), "p1");

        assertThat(e.data().has("record")).isFalse();
        assertThat(e.data().get("old_record").toString()).isEqualTo("{\"id\":7}");
        assertThat(e.filterRow()).isEqualTo(e.oldRecord());
    }

    @Test
    void aRecordOverTheLimitKeepsValuesOfAtMost64BytesAndSaysPayloadTooLarge() throws Exception {
        String big = "x".repeat(2000);
        String small = "y".repeat(EventBuilder.SMALL_VALUE_BYTES);
        BuiltEvent e = builder.build(
                change(
                        'I',
                        List.of(
                                col("id", INT8, JSON.numberNode(7)),
                                col("body", TEXT, JSON.textNode(big)),
                                col("title", TEXT, JSON.textNode(small))),
                        List.of()),
                "p1");

        assertThat(e.data().get("errors").toString()).isEqualTo("[\"" + EventBuilder.PAYLOAD_TOO_LARGE + "\"]");
        assertThat(e.data().get("record").has("id")).isTrue();
        assertThat(e.data().get("record").has("title")).isTrue();
        assertThat(e.data().get("record").has("body")).isFalse();
        assertThat(e.data().get("columns").size())
                .as("columns still list every column")
                .isEqualTo(3);
    }

    @Test
    void aRecordJustUnderTheLimitIsKeptWhole() throws Exception {
        BuiltEvent e =
                builder.build(change('I', List.of(col("body", TEXT, JSON.textNode("z".repeat(900)))), List.of()), "p1");
        assertThat(e.data().get("errors").isNull()).isTrue();
        assertThat(e.data().get("record").get("body").asText()).hasSize(900);
    }

    @Test
    void aTruncateHasNoRows() throws Exception {
        BuiltEvent e = builder.build(change('T', List.of(), List.of()), "p1");
        assertThat(e.data().get("type").asText()).isEqualTo("TRUNCATE");
        assertThat(e.data().has("record")).isFalse();
        assertThat(e.data().has("old_record")).isFalse();
        assertThat(e.data().get("columns").isEmpty()).isTrue();
    }

    private static DecodedColumn col(String name, long oid, JsonNode value) {
        return EventFixture.column(name, oid, value);
    }

    private static RowChange change(char action, List<DecodedColumn> columns, List<DecodedColumn> identity) {
        return EventFixture.change(
                action,
                "project_p1",
                "messages",
                columns,
                identity,
                List.of("id"),
                Lsn.parse("0/16B3748"),
                3,
                "2026-01-02T03:04:05Z");
    }
}
