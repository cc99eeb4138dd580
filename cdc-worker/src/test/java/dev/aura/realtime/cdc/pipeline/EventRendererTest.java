package dev.aura.realtime.cdc.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.common.lsn.Lsn;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Messages rendered per view: what each group of subscribers receives of one change. */
class EventRendererTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private static final ObjectMapper MAPPER = new ObjectMapper();
    private final EventBuilder builder =
            new EventBuilder(oid -> Map.of(20L, "int8", 25L, "text").getOrDefault(oid, "unknown"), 1024);
    private final EventRenderer renderer = new EventRenderer();

    @Test
    void aFullViewPublishesTheBuiltDataUnderTheChangesId() throws Exception {
        BuiltEvent e = update();
        JsonNode msg = render(e, new Delivery(View.FULL, List.of("a", "b")));

        assertThat(msg.get("event_id").asText()).isEqualTo("0/16B3748:3");
        assertThat(msg.get("allowed_sub_ids").toString()).isEqualTo("[\"a\",\"b\"]");
        assertThat(msg.get("data")).isEqualTo(e.data());
    }

    @Test
    void aColumnViewKeepsOnlyItsColumnsInRecordOldRecordAndColumns() throws Exception {
        BuiltEvent e = update();
        JsonNode data = render(e, new Delivery(new View(Set.of("id", "name"), false, List.of()), List.of("a")))
                .get("data");

        assertThat(data.get("record").toString()).isEqualTo("{\"id\":7,\"name\":\"new\"}");
        assertThat(data.get("old_record").toString()).isEqualTo("{\"id\":7,\"name\":\"old\"}");
        assertThat(data.get("columns").toString())
                .isEqualTo("[{\"name\":\"id\",\"type\":\"int8\"},{\"name\":\"name\",\"type\":\"text\"}]");
        // the shared built event is untouched: another view of the same change still has everything
        assertThat(e.data().get("record").has("secret")).isTrue();
    }

    @Test
    void aKeyOnlyViewCutsTheOldRecordToThePrimaryKey() throws Exception {
        JsonNode data = render(update(), new Delivery(View.OLD_RECORD_KEY_ONLY, List.of("a")))
                .get("data");

        assertThat(data.get("old_record").toString()).isEqualTo("{\"id\":7}");
        assertThat(data.get("record").has("secret")).isTrue();
    }

    @Test
    void viewErrorsAreAddedToTheErrorsList() throws Exception {
        JsonNode data = render(
                        update(),
                        new Delivery(new View(Set.of(), false, List.of("Error 401: Unauthorized")), List.of("a")))
                .get("data");

        assertThat(data.get("errors").toString()).isEqualTo("[\"Error 401: Unauthorized\"]");
        assertThat(data.get("record").toString()).isEqualTo("{}");
    }

    @Test
    void eachViewOfAChangeHasItsOwnStableMessageId() {
        BuiltEvent e = update();
        Delivery cut = new Delivery(new View(Set.of("name", "id"), false, List.of()), List.of("a"));
        Delivery sameCut = new Delivery(new View(Set.of("id", "name"), false, List.of()), List.of("b", "c"));
        Delivery key = new Delivery(View.OLD_RECORD_KEY_ONLY, List.of("d"));

        assertThat(EventRenderer.messageId(e, new Delivery(View.FULL, List.of("x"))))
                .isEqualTo(e.eventId());
        assertThat(EventRenderer.messageId(e, cut))
                .startsWith(e.eventId() + ":")
                .isEqualTo(EventRenderer.messageId(e, sameCut))
                .isNotEqualTo(EventRenderer.messageId(e, key));
    }

    private JsonNode render(BuiltEvent e, Delivery d) throws Exception {
        return MAPPER.readTree(renderer.render(e, d));
    }

    private BuiltEvent update() {
        try {
            return builder.build(
                    EventFixture.change(
                            'U',
                            "project_p1",
                            "people",
                            List.of(
                                    col("id", 20, JSON.numberNode(7)),
                                    col("name", 25, JSON.textNode("new")),
                                    col("secret", 25, JSON.textNode("s2"))),
                            List.of(
                                    col("id", 20, JSON.numberNode(7)),
                                    col("name", 25, JSON.textNode("old")),
                                    col("secret", 25, JSON.textNode("s1"))),
                            List.of("id"),
                            Lsn.parse("0/16B3748"),
                            3,
                            "2026-01-02T03:04:05Z"),
                    "p1");
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static DecodedColumn col(String name, long oid, JsonNode value) {
        return EventFixture.column(name, oid, value);
    }
}
