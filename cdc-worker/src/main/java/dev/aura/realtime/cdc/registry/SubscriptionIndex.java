package dev.aura.realtime.cdc.registry;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.filter.EqKey;
import dev.aura.realtime.common.filter.Filter;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.Filters;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The subscription registry as an index by (project, table), and within a table by (column,
 * eq-value) for bindings whose filter has a plain {@code eq} condition (docs/design.md C8): a
 * change touches the bindings of the values its row holds, not every binding of its table. Updated
 * entry by entry in O(1): each slot is a concurrent map by key (a copy-on-write list per slot cost
 * O(n) per put, and a reconnect storm of 5,000 bindings on one table kept the watch seconds
 * behind the bucket). Pure: no I/O, the time is passed in.
 *
 * <p>Entries not written within {@code maxAge} are ignored even without a delete: on
 * nats-server 2.9, expiry by max age produces no watch event.
 *
 * <p>Threads: one writer at a time ({@link #put}, {@link #remove}, {@link #keepFrom} are
 * synchronised; the KV watch calls them on jnats' dispatcher thread); readers on any thread
 * iterate the slots' concurrent maps, and every update is atomic for them: a reader sees an
 * entry's previous version or its new one, never neither. A re-put replaces the entry in its slot
 * in one step (same key). An entry that moves to another slot (its table or eq value changed) is
 * added there before it is removed from the old one, inside a seqlock ({@code moves} odd while a
 * move is under way): a reader that overlapped a move reads again, since it may have read the new
 * slot before the entry arrived and the old one after it left; readers drop the duplicate an
 * overlap can show.
 */
public final class SubscriptionIndex {
    /**
     * An entry under its KV key and when it was last written (epoch ms, from the KV entry's
     * timestamp), with the (column, key) of the eq condition it is indexed by, or nulls.
     */
    record Stored(String key, SubscriptionEntry entry, long writtenAtMs, String eqColumn, String eqKey) {
        Stored(String key, SubscriptionEntry entry, long writtenAtMs) {
            this(key, entry, writtenAtMs, null, null);
        }
    }

    private record Bucket(String projectId, String table) {}

    private static final String ANY_TABLE = "*";

    /** The bucket's max age in force ({@link #maxAge}): it follows the longest resume window. */
    private volatile long maxAgeMs;

    private final Map<String, Stored> byKey = new ConcurrentHashMap<>();
    /** Entries without an indexable eq condition, by table: each slot by key. */
    private final Map<Bucket, Map<String, Stored>> byTable = new ConcurrentHashMap<>();
    /** Entries with one: table → column → eq key → slot (entries by key). */
    private final Map<Bucket, Map<String, Map<String, Map<String, Stored>>>> byEq = new ConcurrentHashMap<>();
    /** Seqlock of moves between lists: odd while one is under way. */
    private final java.util.concurrent.atomic.AtomicLong moves = new java.util.concurrent.atomic.AtomicLong();

    public SubscriptionIndex(Duration maxAge) {
        this.maxAgeMs = maxAge.toMillis();
    }

    /** The bucket's max age changed (docs/design.md R): entries are ignored after this one. */
    public void maxAge(Duration maxAge) {
        this.maxAgeMs = maxAge.toMillis();
    }

    /** Adds or replaces the entry under {@code key}, atomically for readers (see the class comment). */
    public synchronized void put(String key, SubscriptionEntry entry, long writtenAtMs) {
        Stored next = indexed(key, entry, writtenAtMs);
        Stored previous = byKey.put(key, next);
        if (previous == null || sameSlot(previous, next)) {
            link(next);
            return;
        }
        moves.incrementAndGet();
        try {
            link(next);
            unlink(previous);
        } finally {
            moves.incrementAndGet();
        }
    }

    /** Removes the entry under {@code key}, if any. */
    public synchronized void remove(String key) {
        Stored previous = byKey.remove(key);
        if (previous != null) {
            unlink(previous);
        }
    }

    private static Stored indexed(String key, SubscriptionEntry entry, long writtenAtMs) {
        String filter = entry.filter();
        if (filter == null || filter.isEmpty() || ANY_TABLE.equals(entry.table())) {
            return new Stored(key, entry, writtenAtMs);
        }
        try {
            Filter eq = Filters.parse(filter).firstEq();
            if (eq != null) {
                return new Stored(
                        key,
                        entry,
                        writtenAtMs,
                        eq.column(),
                        EqKey.of(eq.values().get(0)));
            }
        } catch (FilterException e) {
            // matches nothing (the matcher says so); kept with the table's other entries
        }
        return new Stored(key, entry, writtenAtMs);
    }

    private static boolean sameSlot(Stored a, Stored b) {
        return bucketOf(a.entry()).equals(bucketOf(b.entry()))
                && java.util.Objects.equals(a.eqColumn(), b.eqColumn())
                && java.util.Objects.equals(a.eqKey(), b.eqKey());
    }

    /** Adds {@code next} to its slot, in place of the entry under the same key (one step for readers). */
    private void link(Stored next) {
        Bucket bucket = bucketOf(next.entry());
        if (next.eqColumn() == null) {
            byTable.computeIfAbsent(bucket, b -> new ConcurrentHashMap<>()).put(next.key(), next);
            return;
        }
        byEq.computeIfAbsent(bucket, b -> new ConcurrentHashMap<>())
                .computeIfAbsent(next.eqColumn(), c -> new ConcurrentHashMap<>())
                .computeIfAbsent(next.eqKey(), k -> new ConcurrentHashMap<>())
                .put(next.key(), next);
    }

    private void unlink(Stored stored) {
        Bucket bucket = bucketOf(stored.entry());
        if (stored.eqColumn() == null) {
            Map<String, Stored> slot = byTable.get(bucket);
            if (slot != null && slot.remove(stored.key(), stored) && slot.isEmpty()) {
                byTable.remove(bucket, slot); // one writer: nothing is added to it meanwhile
            }
            return;
        }
        Map<String, Map<String, Map<String, Stored>>> columns = byEq.get(bucket);
        Map<String, Map<String, Stored>> values = columns == null ? null : columns.get(stored.eqColumn());
        if (values == null) {
            return;
        }
        Map<String, Stored> slot = values.get(stored.eqKey());
        if (slot != null && slot.remove(stored.key(), stored) && slot.isEmpty()) {
            values.remove(stored.eqKey(), slot);
        }
        if (values.isEmpty()) {
            columns.remove(stored.eqColumn());
            if (columns.isEmpty()) {
                byEq.remove(bucket);
            }
        }
    }

    /**
     * The live entries for a change of {@code table} in {@code projectId}, including entries for
     * every table ({@code *}): written within the max age and with an unexpired token. Never null.
     * Every entry of the table, whatever its eq value.
     */
    public List<SubscriptionEntry> candidates(String projectId, String table, long nowMs) {
        return candidates(projectId, table, null, Map.of(), nowMs, true);
    }

    /**
     * As {@link #candidates(String, String, long)}, but of the entries indexed by an eq condition
     * only those whose value the row holds: a superset of the entries whose filter matches the
     * row.
     *
     * @param row the row the filters test (null: a TRUNCATE, which no filtered entry matches);
     *     asked for only when the table has indexed entries
     * @param columnTypes typname by column
     */
    public List<SubscriptionEntry> candidates(
            String projectId, String table, Supplier<JsonNode> row, Map<String, String> columnTypes, long nowMs) {
        return candidates(projectId, table, row, columnTypes, nowMs, false);
    }

    private List<SubscriptionEntry> candidates(
            String projectId,
            String table,
            Supplier<JsonNode> row,
            Map<String, String> columnTypes,
            long nowMs,
            boolean everyValue) {
        while (true) {
            long before = moves.get();
            if ((before & 1) == 0) {
                List<SubscriptionEntry> out = read(projectId, table, row, columnTypes, nowMs, everyValue);
                if (moves.get() == before) {
                    return out;
                }
            }
            Thread.onSpinWait();
        }
    }

    private List<SubscriptionEntry> read(
            String projectId,
            String table,
            Supplier<JsonNode> row,
            Map<String, String> columnTypes,
            long nowMs,
            boolean everyValue) {
        Bucket bucket = new Bucket(projectId, table);
        List<Collection<Stored>> sources = new ArrayList<>(4);
        addIfAny(sources, byTable.get(bucket));
        addIfAny(sources, byTable.get(new Bucket(projectId, ANY_TABLE)));
        Map<String, Map<String, Map<String, Stored>>> columns = byEq.get(bucket);
        if (columns != null) {
            JsonNode r = everyValue ? null : row.get();
            for (Map.Entry<String, Map<String, Map<String, Stored>>> c : columns.entrySet()) {
                if (everyValue || !EqKey.INDEXED.contains(columnTypes.get(c.getKey()))) {
                    if (everyValue || r != null) {
                        c.getValue().values().forEach(list -> addIfAny(sources, list));
                    }
                    continue;
                }
                JsonNode cell = r == null ? null : r.get(c.getKey());
                if (cell != null && !cell.isNull()) {
                    addIfAny(sources, c.getValue().get(EqKey.of(cell.isValueNode() ? cell.asText() : cell.toString())));
                }
            }
        }
        if (sources.isEmpty()) {
            return List.of();
        }
        long oldest = nowMs - maxAgeMs;
        List<SubscriptionEntry> out = new ArrayList<>();
        Set<String> seen = sources.size() > 1 ? new HashSet<>() : null;
        for (Collection<Stored> slot : sources) {
            for (Stored s : slot) {
                if (s.writtenAtMs() >= oldest
                        && s.entry().expiresAtMs() > nowMs
                        && (seen == null || seen.add(s.key()))) {
                    out.add(s.entry());
                }
            }
        }
        return out;
    }

    private static void addIfAny(List<Collection<Stored>> sources, Map<String, Stored> slot) {
        if (slot != null && !slot.isEmpty()) {
            sources.add(slot.values());
        }
    }

    /** Number of indexed entries (including stale ones not yet evicted). */
    public int size() {
        return byKey.size();
    }

    boolean contains(String key) {
        return byKey.containsKey(key);
    }

    /** The ws-front instances owning at least one entry written within the max age. */
    Set<String> liveOwners(long nowMs) {
        Set<String> owners = new HashSet<>();
        for (Stored s : byKey.values()) {
            if (s.writtenAtMs() >= nowMs - maxAgeMs && s.entry().instance() != null) {
                owners.add(s.entry().instance());
            }
        }
        return owners;
    }

    /** The subset of {@code owners} that wrote no entry at or after {@code sinceMs}. */
    Set<String> silentSince(Set<String> owners, long sinceMs) {
        Set<String> missing = new HashSet<>(owners);
        for (Stored s : byKey.values()) {
            if (s.writtenAtMs() >= sinceMs) {
                missing.remove(s.entry().instance());
            }
        }
        return missing;
    }

    /**
     * Copies the entries of {@code previous} that this index lacks, unless deleted meanwhile or
     * older than the max age, keeping their write time so they still expire with it.
     *
     * @return how many were copied
     */
    synchronized int keepFrom(SubscriptionIndex previous, Set<String> deleted, long nowMs) {
        int kept = 0;
        for (Stored s : previous.byKey.values()) {
            if (!byKey.containsKey(s.key()) && !deleted.contains(s.key()) && s.writtenAtMs() >= nowMs - maxAgeMs) {
                put(s.key(), s.entry(), s.writtenAtMs());
                kept++;
            }
        }
        return kept;
    }

    private static Bucket bucketOf(SubscriptionEntry entry) {
        return new Bucket(entry.projectId(), entry.table());
    }
}
