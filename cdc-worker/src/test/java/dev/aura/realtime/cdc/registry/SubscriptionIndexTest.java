package dev.aura.realtime.cdc.registry;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.EventFixture;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.match.Matcher;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The registry index, entry by entry, with the time passed in. */
class SubscriptionIndexTest {
    private static final long NOW = 1_000_000;
    private final SubscriptionIndex index = new SubscriptionIndex(Duration.ofSeconds(120));

    @Test
    void aChangeFindsTheBindingsOfItsTableAndOfEveryTableInItsProjectOnly() {
        SubscriptionEntry exact = entry("a", "p1", "notes");
        SubscriptionEntry any = entry("b", "p1", "*");
        SubscriptionEntry otherTable = entry("c", "p1", "todos");
        SubscriptionEntry otherProject = entry("d", "p2", "notes");
        for (SubscriptionEntry e : List.of(exact, any, otherTable, otherProject)) {
            index.put(e.key(), e, NOW);
        }

        assertThat(index.candidates("p1", "notes", NOW)).containsExactly(exact, any);
        assertThat(index.candidates("p3", "notes", NOW)).isEmpty();
        assertThat(index.size()).isEqualTo(4);
    }

    @Test
    void aPutUnderAnExistingKeyReplacesTheEntryEvenWhenItsTableChanged() {
        index.put("k", entry("a", "p1", "notes"), NOW);
        index.put("k", entry("a", "p1", "todos"), NOW);

        assertThat(index.candidates("p1", "notes", NOW)).isEmpty();
        assertThat(index.candidates("p1", "todos", NOW)).hasSize(1);
        assertThat(index.size()).isEqualTo(1);
    }

    @Test
    void aDeleteRemovesOnlyItsEntry() {
        SubscriptionEntry a = entry("a", "p1", "notes");
        SubscriptionEntry b = entry("b", "p1", "notes");
        index.put(a.key(), a, NOW);
        index.put(b.key(), b, NOW);
        index.remove(a.key());
        index.remove("never-there");

        assertThat(index.candidates("p1", "notes", NOW)).containsExactly(b);
    }

    @Test
    void entriesPastTheMaxAgeOrTheirTokensExpiryAreIgnoredWithoutADelete() {
        SubscriptionEntry stale = entry("stale", "p1", "notes");
        SubscriptionEntry expired =
                new SubscriptionEntry("expired", "p1", "notes", "*", null, "anon", null, NOW - 1, "front-1");
        SubscriptionEntry live = entry("live", "p1", "notes");
        index.put(stale.key(), stale, NOW - 121_000);
        index.put(expired.key(), expired, NOW);
        index.put(live.key(), live, NOW);

        assertThat(index.candidates("p1", "notes", NOW)).containsExactly(live);
        assertThat(index.size()).as("kept until a delete or a new snapshot").isEqualTo(3);
    }

    @Test
    void aNewSnapshotKeepsEntriesItLacksUnlessDeletedMeanwhileOrTooOld() {
        SubscriptionIndex previous = new SubscriptionIndex(Duration.ofSeconds(120));
        SubscriptionEntry lost = entry("lost", "p1", "notes");
        SubscriptionEntry deleted = entry("deleted", "p1", "notes");
        SubscriptionEntry old = entry("old", "p1", "notes");
        SubscriptionEntry reput = entry("reput", "p1", "notes");
        previous.put(lost.key(), lost, NOW - 5_000);
        previous.put(deleted.key(), deleted, NOW);
        previous.put(old.key(), old, NOW - 200_000);
        previous.put(reput.key(), reput, NOW - 5_000);
        index.put(reput.key(), reput, NOW);

        int kept = index.keepFrom(previous, Set.of(deleted.key()), NOW);

        assertThat(kept).isEqualTo(1);
        assertThat(index.contains(lost.key())).isTrue();
        assertThat(index.contains(deleted.key())).isFalse();
        assertThat(index.contains(old.key())).isFalse();
        assertThat(index.liveOwners(NOW)).containsExactly("front-1");
        assertThat(index.silentSince(Set.of("front-1"), NOW))
                .as("reput was written at NOW")
                .isEmpty();
    }

    @Test
    void aReaderDuringRePutsAlwaysSeesTheOldOrTheNewEntryNeverNeither() throws Exception {
        SubscriptionEntry a = entry("a", "p1", "notes");
        SubscriptionEntry neighbour = entry("b", "p1", "notes");
        index.put(neighbour.key(), neighbour, NOW);
        index.put(a.key(), a, NOW);
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger misses = new AtomicInteger();
        Thread reader = new Thread(() -> {
            while (!done.get()) {
                if (index.candidates("p1", "notes", NOW).size() != 2) {
                    misses.incrementAndGet();
                }
            }
        });
        reader.start();
        try {
            for (int i = 0; i < 200_000; i++) {
                index.put(a.key(), a, NOW + (i % 2)); // ws-front's periodic re-put of every binding
            }
        } finally {
            done.set(true);
            reader.join();
        }

        assertThat(misses.get())
                .as("reads that saw neither the old nor the new entry")
                .isZero();
    }

    @Test
    void aChangeTouchesOnlyTheEqBindingsOfTheValuesItsRowHolds() {
        for (int i = 0; i < 1000; i++) {
            SubscriptionEntry e = filtered("id" + i, "id=eq." + i);
            index.put(e.key(), e, NOW);
        }
        SubscriptionEntry unfiltered = entry("all", "p1", "notes");
        SubscriptionEntry ranged = filtered("ranged", "id=gt.5");
        SubscriptionEntry and = filtered("and", "body=like.%x%,id=eq.7.0");
        SubscriptionEntry uuid = filtered("uuid", "owner=eq.A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11");
        SubscriptionEntry flag = filtered("flag", "done=eq.t");
        SubscriptionEntry stamp = filtered("stamp", "at=eq.2026-01-01T00:00:00Z");
        for (SubscriptionEntry e : List.of(unfiltered, ranged, and, uuid, flag, stamp)) {
            index.put(e.key(), e, NOW);
        }
        ObjectNode row = JsonNodeFactory.instance
                .objectNode()
                .put("id", 7)
                .put("body", "x")
                .put("owner", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11")
                .put("done", true)
                .put("at", "2026-01-01T02:00:00+02:00");
        Map<String, String> types =
                Map.of("id", "int8", "body", "text", "owner", "uuid", "done", "bool", "at", "timestamptz");

        assertThat(index.candidates("p1", "notes", () -> row, types, NOW))
                .extracting(SubscriptionEntry::subId)
                .as("the value's bindings, the unindexed ones, and every eq binding of a column of another type")
                .containsExactlyInAnyOrder("id7", "all", "ranged", "and", "uuid", "flag", "stamp");
        assertThat(index.candidates("p1", "notes", () -> null, types, NOW))
                .as("a TRUNCATE has no row")
                .extracting(SubscriptionEntry::subId)
                .containsExactlyInAnyOrder("all", "ranged");
        assertThat(index.candidates("p1", "notes", NOW)).hasSize(1006);
        index.remove(filtered("id7", "").key());
        assertThat(index.candidates("p1", "notes", () -> row, types, NOW))
                .extracting(SubscriptionEntry::subId)
                .doesNotContain("id7");
    }

    @Test
    void theIndexNeverHidesABindingTheMatcherWouldMatch() {
        Matcher matcher = new Matcher();
        List<String> values = List.of("1", "01", "1.0", "1e0", "t", "TRUE", "x", "X", " 1", "-0", "0", "nan", "NaN");
        List<SubscriptionEntry> all = new java.util.ArrayList<>();
        for (String v : values) {
            for (String col : List.of("n", "b", "s")) {
                SubscriptionEntry e = filtered(col + "=" + v, col + "=eq." + v);
                all.add(e);
                index.put(e.key(), e, NOW);
            }
        }
        Map<String, String> types = Map.of("n", "numeric", "b", "bool", "s", "text");
        for (String v : values) {
            ObjectNode row = JsonNodeFactory.instance
                    .objectNode()
                    .put("n", v)
                    .put("b", v)
                    .put("s", v);
            BuiltEvent event = EventFixture.event("p1", "s", "notes", "INSERT", row, null, types, List.of());
            List<SubscriptionEntry> matched = matcher.match(event, all);
            assertThat(index.candidates("p1", "notes", event::record, types, NOW))
                    .as("row value %s", v)
                    .containsAll(matched);
        }
    }

    @Test
    void aReaderDuringRePutsOfAnIndexedOrMovingEntrySeesItExactlyOnce() throws Exception {
        SubscriptionEntry a = filtered("a", "id=eq.1");
        SubscriptionEntry moved = filtered("a", "id=eq.1,body=eq.x");
        SubscriptionEntry rest = filtered("a", "id=gt.0");
        index.put(a.key(), a, NOW);
        ObjectNode row = JsonNodeFactory.instance.objectNode().put("id", 1).put("body", "x");
        Map<String, String> types = Map.of("id", "int4", "body", "text");
        AtomicBoolean done = new AtomicBoolean();
        AtomicInteger misses = new AtomicInteger();
        Thread reader = new Thread(() -> {
            while (!done.get()) {
                if (index.candidates("p1", "notes", () -> row, types, NOW).size() != 1) {
                    misses.incrementAndGet();
                }
            }
        });
        reader.start();
        try {
            for (int i = 0; i < 100_000; i++) {
                SubscriptionEntry next = i % 3 == 0 ? a : i % 3 == 1 ? moved : rest;
                index.put(next.key(), next, NOW);
            }
        } finally {
            done.set(true);
            reader.join();
        }
        assertThat(misses.get())
                .as("reads that saw the entry zero or two times")
                .isZero();
    }

    private static SubscriptionEntry filtered(String subId, String filter) {
        return new SubscriptionEntry(
                subId.replaceAll("[^A-Za-z0-9_-]", "_"),
                "p1",
                "notes",
                "*",
                filter.isEmpty() ? null : filter,
                "anon",
                null,
                Long.MAX_VALUE,
                "front-1");
    }

    private static SubscriptionEntry entry(String subId, String project, String table) {
        return new SubscriptionEntry(subId, project, table, "*", null, "anon", null, Long.MAX_VALUE, "front-1");
    }
}
