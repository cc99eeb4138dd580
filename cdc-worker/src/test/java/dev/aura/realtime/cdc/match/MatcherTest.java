package dev.aura.realtime.cdc.match;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A binding's event and filter decide whether it matches a change, before any RLS check. */
class MatcherTest {
    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
    private final Matcher matcher = new Matcher();

    @Test
    void anyEventMatchesEveryTypeAndANamedEventOnlyItsOwnInAnyCase() {
        SubscriptionEntry all = binding("all", "*", null);
        SubscriptionEntry unset = binding("unset", null, null);
        SubscriptionEntry inserts = binding("inserts", "insert", null);
        SubscriptionEntry deletes = binding("deletes", "DELETE", null);
        List<SubscriptionEntry> bindings = List.of(all, unset, inserts, deletes);

        assertThat(matcher.match(change("INSERT", row(1, "a"), null), bindings)).containsExactly(all, unset, inserts);
        assertThat(matcher.match(change("DELETE", null, row(1, "a")), bindings)).containsExactly(all, unset, deletes);
    }

    @Test
    void aFilterIsTestedAgainstTheNewRowAndForADeleteAgainstTheOldRow() {
        SubscriptionEntry onlyB = binding("b", "*", "body=eq.b");
        List<SubscriptionEntry> bindings = List.of(onlyB);

        assertThat(matcher.match(change("INSERT", row(1, "b"), null), bindings)).containsExactly(onlyB);
        assertThat(matcher.match(change("INSERT", row(1, "a"), null), bindings)).isEmpty();
        // an UPDATE is matched by its new row, whatever the old one was
        assertThat(matcher.match(change("UPDATE", row(1, "b"), row(1, "a")), bindings))
                .containsExactly(onlyB);
        assertThat(matcher.match(change("UPDATE", row(1, "a"), row(1, "b")), bindings))
                .isEmpty();
        assertThat(matcher.match(change("DELETE", null, row(1, "b")), bindings)).containsExactly(onlyB);
        assertThat(matcher.match(change("DELETE", null, row(1, "a")), bindings)).isEmpty();
    }

    @Test
    void aFilterComparesByTheColumnsType() {
        SubscriptionEntry overTen = binding("gt", "*", "id=gt.10");
        assertThat(matcher.match(change("INSERT", row(11, "x"), null), List.of(overTen)))
                .containsExactly(overTen);
        assertThat(matcher.match(change("INSERT", row(9, "x"), null), List.of(overTen)))
                .isEmpty();
    }

    @Test
    void aTruncateReachesOnlyUnfilteredBindings() {
        SubscriptionEntry unfiltered = binding("all", "*", null);
        SubscriptionEntry filtered = binding("b", "*", "body=eq.b");
        assertThat(matcher.match(change("TRUNCATE", null, null), List.of(unfiltered, filtered)))
                .containsExactly(unfiltered);
    }

    @Test
    void aFilterThatNoLongerParsesMatchesNothing() {
        SubscriptionEntry broken = binding("broken", "*", "body=nonsense");
        assertThat(matcher.match(change("INSERT", row(1, "nonsense"), null), List.of(broken)))
                .isEmpty();
    }

    @Test
    void theParsedFilterCacheStaysBoundedUnderManyDistinctFilters() {
        for (int i = 0; i < Matcher.MAX_CACHED_FILTERS + 5_000; i++) {
            SubscriptionEntry b = binding("f" + i, "*", "id=eq." + i);
            List<SubscriptionEntry> matched = matcher.match(change("INSERT", row(i, "x"), null), List.of(b));
            assertThat(matched).containsExactly(b);
            assertThat(matcher.cachedFilters()).isLessThanOrEqualTo(Matcher.MAX_CACHED_FILTERS);
        }
    }

    @Test
    void noCandidatesNoMatches() {
        assertThat(matcher.match(change("INSERT", row(1, "a"), null), List.of()))
                .isEmpty();
    }

    private static ObjectNode row(int id, String body) {
        return JSON.objectNode().put("id", id).put("body", body);
    }

    private static BuiltEvent change(String type, ObjectNode record, ObjectNode oldRecord) {
        return EventFixture.event(
                "p",
                "project_p",
                "messages",
                type,
                record,
                oldRecord,
                Map.of("id", "int8", "body", "text"),
                List.of("id"));
    }

    private static SubscriptionEntry binding(String subId, String event, String filter) {
        return new SubscriptionEntry(
                subId, "p", "messages", event, filter, "service_role", null, Long.MAX_VALUE, "front-1");
    }
}
