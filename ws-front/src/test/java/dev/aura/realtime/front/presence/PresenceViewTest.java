package dev.aura.realtime.front.presence;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.WireJson;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class PresenceViewTest {
    private static final PresenceView.Channel ROOM = new PresenceView.Channel("p1", "room");
    private final ObjectMapper mapper = WireJson.mapper();
    private final PresenceView view = new PresenceView();

    private PresenceEntry entry(String key, String member, String ref, String prev, String metaJson) throws Exception {
        return new PresenceEntry("p1", "room", key, member, ref, prev, mapper.readTree(metaJson), "front-a");
    }

    private JsonNode onlyDiff() {
        Map<PresenceView.Channel, com.fasterxml.jackson.databind.node.ObjectNode> diffs = view.drainDiffs();
        assertThat(diffs).containsOnlyKeys(ROOM);
        return diffs.get(ROOM);
    }

    @Test
    void aFirstTrackIsAJoinWithPhxRefAndThePayload() throws Exception {
        PresenceEntry e = entry("alice", "m1", "r1", null, "{\"status\":\"online\"}");
        view.put(e.kvKey(), e, 0);
        assertThat(onlyDiff().toString())
                .isEqualTo(
                        "{\"joins\":{\"alice\":{\"metas\":[{\"status\":\"online\",\"phx_ref\":\"r1\"}]}},\"leaves\":{}}");
    }

    @Test
    void aRefreshOfTheSameEntryIsNoDiff() throws Exception {
        PresenceEntry e = entry("alice", "m1", "r1", null, "{}");
        view.put(e.kvKey(), e, 0);
        view.drainDiffs();
        view.put(e.kvKey(), entry("alice", "m1", "r1", null, "{}"), 10);
        assertThat(view.drainDiffs()).isEmpty();
    }

    @Test
    void reTrackingIsOneDiffWithTheNewMetaJoiningAndTheOldLeaving() throws Exception {
        PresenceEntry first = entry("alice", "m1", "r1", null, "{\"s\":1}");
        view.put(first.kvKey(), first, 0);
        view.drainDiffs();
        PresenceEntry second = entry("alice", "m1", "r2", "r1", "{\"s\":2}");
        view.put(second.kvKey(), second, 5);
        assertThat(onlyDiff().toString())
                .isEqualTo("{\"joins\":{\"alice\":{\"metas\":[{\"s\":2,\"phx_ref\":\"r2\",\"phx_ref_prev\":\"r1\"}]}},"
                        + "\"leaves\":{\"alice\":{\"metas\":[{\"s\":1,\"phx_ref\":\"r1\"}]}}}");
        assertThat(view.state(ROOM).toString())
                .isEqualTo("{\"alice\":{\"metas\":[{\"s\":2,\"phx_ref\":\"r2\",\"phx_ref_prev\":\"r1\"}]}}");
    }

    @Test
    void twiceReTrackedInOneBatchLeavesOnlyTheRefListenersKnew() throws Exception {
        PresenceEntry first = entry("alice", "m1", "r1", null, "{}");
        view.put(first.kvKey(), first, 0);
        view.drainDiffs();
        view.put(first.kvKey(), entry("alice", "m1", "r2", "r1", "{}"), 1);
        view.put(first.kvKey(), entry("alice", "m1", "r3", "r2", "{}"), 2);
        JsonNode diff = onlyDiff();
        assertThat(diff.at("/joins/alice/metas").findValuesAsText("phx_ref")).containsExactly("r3");
        assertThat(diff.at("/leaves/alice/metas").findValuesAsText("phx_ref")).containsExactly("r1");
    }

    @Test
    void aPresenceThatCameAndWentWithinOneBatchIsNotSentAtAll() throws Exception {
        PresenceEntry e = entry("bob", "m2", "r9", null, "{}");
        view.put(e.kvKey(), e, 0);
        view.remove(e.kvKey());
        assertThat(view.drainDiffs()).isEmpty();
        assertThat(view.state(ROOM).size()).isZero();
    }

    @Test
    void untrackIsALeaveAndUnknownDeletesAreIgnored() throws Exception {
        PresenceEntry e = entry("bob", "m2", "r9", null, "{\"x\":true}");
        view.put(e.kvKey(), e, 0);
        view.drainDiffs();
        view.remove(e.kvKey());
        view.remove("v1.p1.room.nobody.m0");
        assertThat(onlyDiff().toString())
                .isEqualTo("{\"joins\":{},\"leaves\":{\"bob\":{\"metas\":[{\"x\":true,\"phx_ref\":\"r9\"}]}}}");
    }

    @Test
    void twoMembersWithOneKeyAreOneKeyWithTwoMetasAndChannelsStayApart() throws Exception {
        PresenceEntry tab1 = entry("alice", "m1", "r1", null, "{}");
        PresenceEntry tab2 = entry("alice", "m2", "r2", null, "{}");
        PresenceEntry elsewhere =
                new PresenceEntry("p2", "room", "carol", "m3", "r3", null, mapper.readTree("{}"), "front-b");
        view.put(tab1.kvKey(), tab1, 0);
        view.put(tab2.kvKey(), tab2, 0);
        view.put(elsewhere.kvKey(), elsewhere, 0);
        assertThat(view.state(ROOM).toString())
                .isEqualTo("{\"alice\":{\"metas\":[{\"phx_ref\":\"r1\"},{\"phx_ref\":\"r2\"}]}}");
        assertThat(view.drainDiffs()).hasSize(2);
    }

    @Test
    void reconciliationDropsKeysTheBucketLostAndThatWereNotSeenRecently() throws Exception {
        PresenceEntry live = entry("a", "m1", "r1", null, "{}");
        PresenceEntry expired = entry("b", "m2", "r2", null, "{}");
        PresenceEntry fresh = entry("c", "m3", "r3", null, "{}");
        view.put(live.kvKey(), live, 0);
        view.put(expired.kvKey(), expired, 0);
        view.put(fresh.kvKey(), fresh, 0);
        view.drainDiffs();
        view.put(fresh.kvKey(), fresh, 900); // refreshed: seen after the cut-off, e.g. re-put after a NATS restart

        assertThat(view.reconcile(Set.of(live.kvKey()), 500)).isEqualTo(1);
        JsonNode diff = onlyDiff();
        assertThat(diff.get("joins").size()).isZero();
        assertThat(diff.get("leaves").fieldNames()).toIterable().containsExactly("b");
        assertThat(view.size()).isEqualTo(2);
    }
}
