package dev.aura.realtime.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.testkit.RealtimeJsClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * realtime-js's own {@code postgresChangesFilter()} builder (operators, quoting, {@code not}, AND
 * lists) and {@code select}, end to end on protocol 1.0.0 and 2.0.0 (docs/protocol.md "Filters").
 */
class FilterBuilderE2EIT {
    private static E2eStack stack;

    @BeforeAll
    static void start() {
        stack = E2eStack.startDefault(1);
        stack.createEnabledTable("items", "(id bigserial PRIMARY KEY, title text, qty int, tag text, secret text)");
    }

    @AfterAll
    static void stop() {
        stack.close();
    }

    private static Map<String, Object> binding(String event, Object... extra) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("event", event);
        b.put("schema", "public");
        b.put("table", "items");
        for (int i = 0; i < extra.length; i += 2) {
            b.put((String) extra[i], extra[i + 1]);
        }
        return b;
    }

    private static List<JsonNode> inserts(RealtimeJsClient js, String channel) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode e : js.events()) {
            if ("postgres_changes".equals(e.path("type").asText())
                    && channel.equals(e.path("channel").asText())) {
                out.add(e.path("payload").path("new"));
            }
        }
        return out;
    }

    private static List<String> titles(RealtimeJsClient js, String channel) {
        return inserts(js, channel).stream()
                .map(n -> n.path("title").asText("<null>"))
                .toList();
    }

    @ParameterizedTest(name = "vsn {0}")
    @ValueSource(strings = {"1.0.0", "2.0.0"})
    void theClientsFilterBuilderAndSelectWorkEndToEnd(String vsn) throws Exception {
        Map<String, Map<String, Object>> channels = new LinkedHashMap<>();
        // like + AND: "title=like.%foo%,qty=gt.2"
        channels.put(
                "like",
                binding(
                        "INSERT",
                        "filterBuilder",
                        List.of(List.of("like", "title", "%foo%"), List.of("gt", "qty", 2))));
        // quoted in-list items and not.is.null: 'tag=in.("a,b","(c)"),title=not.is.null'
        channels.put(
                "in",
                binding(
                        "INSERT",
                        "filterBuilder",
                        List.of(List.of("in", "tag", List.of("a,b", "(c)")), List.of("not", "title", "is", "null"))));
        // a value with a comma, quotes and a backslash, double-quoted and escaped by the client
        channels.put("quoted", binding("INSERT", "filterBuilder", List.of(List.of("eq", "title", "x, \"y\" \\ z"))));
        // case-insensitive POSIX regex and a negated in-list
        channels.put(
                "imatch",
                binding(
                        "INSERT",
                        "filterBuilder",
                        List.of(List.of("imatch", "title", "^BAR"), List.of("not", "qty", "in", List.of(7, 8)))));
        // two bindings differing only in select are two subscriptions with their own ids
        channels.put("selected", binding("INSERT", "select", List.of("id", "title")));
        channels.put("everything", binding("INSERT"));

        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId), vsn, Map.of());
            for (var c : channels.entrySet()) {
                js.channel(c.getKey());
                js.onPostgresChanges(c.getKey(), c.getValue());
            }
            js.channel("both");
            js.onPostgresChanges("both", binding("INSERT", "select", List.of("title")));
            js.onPostgresChanges("both", binding("INSERT"));
            for (String c : channels.keySet()) {
                js.subscribeAndAwait(c, Duration.ofSeconds(15));
            }
            js.subscribeAndAwait("both", Duration.ofSeconds(15));

            stack.sql("INSERT INTO " + stack.table("items") + "(title, qty, tag, secret) VALUES "
                    + "('a foo b', 3, 'z', 's1'), "
                    + "('a foo c', 1, 'z', 's2'), "
                    + "('bar none', 9, 'a,b', 's3'), "
                    + "(NULL, 1, '(c)', 's4'), "
                    + "('x, \"y\" \\ z', 7, 'q', 's5'), "
                    + "('BARN', 7, 'q', 's6')");

            js.awaitEvent(
                    e -> inserts(js, "everything").size() == 6
                            && inserts(js, "selected").size() == 6
                            && inserts(js, "both").size() == 12,
                    Duration.ofSeconds(15));
            js.assertNoEvent(
                    js.eventCount(),
                    e -> "postgres_changes".equals(e.path("type").asText()),
                    Duration.ofSeconds(1));

            assertThat(titles(js, "like")).containsExactly("a foo b");
            assertThat(titles(js, "in")).containsExactly("bar none");
            assertThat(titles(js, "quoted")).containsExactly("x, \"y\" \\ z");
            assertThat(titles(js, "imatch")).containsExactly("bar none");
            assertThat(inserts(js, "selected"))
                    .allSatisfy(n -> assertThat(n.properties().stream()
                                    .map(Map.Entry::getKey)
                                    .toList())
                            .containsExactlyInAnyOrder("id", "title"));
            assertThat(inserts(js, "everything"))
                    .allSatisfy(n -> assertThat(n.has("secret")).isTrue());
            List<JsonNode> both = inserts(js, "both");
            assertThat(both.stream().filter(n -> n.size() == 1 && n.has("title")))
                    .hasSize(6);
            assertThat(both.stream().filter(n -> n.has("secret"))).hasSize(6);
        }
    }

    @Test
    void postgresChangesOptionsWaitHoldsTheReplyUntilChangesFlowAndFailsAtItsTimeout() throws Exception {
        Map<String, Object> waitConfig = Map.of("postgres_changes_options", Map.of("wait", true, "timeout", 3000));
        try (RealtimeJsClient js = RealtimeJsClient.start()) {
            js.connect(stack.wsUrl(0), stack.tokens.anon(stack.projectId), "2.0.0", Map.of());
            js.channel("waited", waitConfig);
            js.onPostgresChanges("waited", binding("INSERT", "filter", "title=eq.waited"));
            js.subscribeAndAwait("waited", Duration.ofSeconds(20));
            // SUBSCRIBED means changes flow: a row written at once arrives
            stack.sql(
                    "INSERT INTO " + stack.table("items") + "(title, qty, tag, secret) VALUES ('waited', 1, 'w', 's')");
            js.awaitEvent(
                    e -> "postgres_changes".equals(e.path("type").asText())
                            && "waited"
                                    .equals(e.path("payload")
                                            .path("new")
                                            .path("title")
                                            .asText()),
                    Duration.ofSeconds(10));

            stack.cdcWorker().stop();
            try {
                js.channel("no-cdc", waitConfig);
                js.onPostgresChanges("no-cdc", binding("INSERT"));
                js.subscribe("no-cdc");
                JsonNode status = js.awaitStatus("no-cdc", "CHANNEL_ERROR", Duration.ofSeconds(15));
                // the server's answer at its 3 s timeout (the client's own, 13 s, would report TIMED_OUT)
                assertThat(status.toString()).contains("PostgresChangesSubscribeTimeout");
            } finally {
                stack.startCdcWorker(Map.of(), List.of());
            }
        }
    }
}
