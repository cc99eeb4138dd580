package dev.aura.realtime.cdc.registry;

import static org.assertj.core.api.Assertions.assertThat;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.time.Duration;
import java.util.List;
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

    private static SubscriptionEntry entry(String subId, String project, String table) {
        return new SubscriptionEntry(subId, project, table, "*", null, "anon", null, Long.MAX_VALUE, "front-1");
    }
}
