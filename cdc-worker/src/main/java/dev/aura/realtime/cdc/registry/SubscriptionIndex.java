package dev.aura.realtime.cdc.registry;

import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The subscription registry as an index by (project, table), updated entry by entry: a put or a
 * delete copies only the bucket of its (project, table), never the whole index. Pure: no I/O,
 * the time is passed in.
 *
 * <p>Entries not written within {@code maxAge} are ignored even without a delete: on
 * nats-server 2.9, expiry by max age produces no watch event.
 *
 * <p>Threads: one writer at a time ({@link #put}, {@link #remove}, {@link #keepFrom} are
 * synchronised; the KV watch calls them on jnats' dispatcher thread); readers on any thread see
 * immutable lists.
 */
public final class SubscriptionIndex {
    /** An entry under its KV key and when it was last written (epoch ms, from the KV entry's timestamp). */
    record Stored(String key, SubscriptionEntry entry, long writtenAtMs) {}

    private record Bucket(String projectId, String table) {}

    private static final String ANY_TABLE = "*";

    private final long maxAgeMs;
    private final Map<String, Stored> byKey = new ConcurrentHashMap<>();
    private final Map<Bucket, List<Stored>> byTable = new ConcurrentHashMap<>();

    public SubscriptionIndex(Duration maxAge) {
        this.maxAgeMs = maxAge.toMillis();
    }

    /**
     * Adds or replaces the entry under {@code key}, atomically for readers: a concurrent
     * {@link #candidates} sees the previous entry or the new one, never neither (the previous one
     * is replaced in its bucket's list in one step, or, when the bucket changes, removed only after
     * the new one was added).
     */
    public synchronized void put(String key, SubscriptionEntry entry, long writtenAtMs) {
        Stored next = new Stored(key, entry, writtenAtMs);
        Stored previous = byKey.put(key, next);
        Bucket bucket = bucketOf(entry);
        byTable.compute(bucket, (b, list) -> {
            List<Stored> grown = new ArrayList<>(list == null ? 1 : list.size() + 1);
            boolean replaced = false;
            if (list != null) {
                for (Stored s : list) {
                    if (s == previous) {
                        grown.add(next);
                        replaced = true;
                    } else {
                        grown.add(s);
                    }
                }
            }
            if (!replaced) {
                grown.add(next);
            }
            return List.copyOf(grown);
        });
        if (previous != null && !bucketOf(previous.entry()).equals(bucket)) {
            unlink(previous);
        }
    }

    /** Removes the entry under {@code key}, if any. */
    public synchronized void remove(String key) {
        Stored previous = byKey.remove(key);
        if (previous != null) {
            unlink(previous);
        }
    }

    private void unlink(Stored stored) {
        byTable.computeIfPresent(bucketOf(stored.entry()), (b, list) -> {
            List<Stored> rest = list.stream().filter(s -> s != stored).toList();
            return rest.isEmpty() ? null : rest;
        });
    }

    /**
     * The live entries for a change of {@code table} in {@code projectId}, including entries for
     * every table ({@code *}): written within the max age and with an unexpired token. Never null.
     */
    public List<SubscriptionEntry> candidates(String projectId, String table, long nowMs) {
        List<Stored> exact = byTable.getOrDefault(new Bucket(projectId, table), List.of());
        List<Stored> any = byTable.getOrDefault(new Bucket(projectId, ANY_TABLE), List.of());
        if (exact.isEmpty() && any.isEmpty()) {
            return List.of();
        }
        long oldest = nowMs - maxAgeMs;
        List<SubscriptionEntry> out = new ArrayList<>(exact.size() + any.size());
        for (List<Stored> list : List.of(exact, any)) {
            for (Stored s : list) {
                if (s.writtenAtMs() >= oldest && s.entry().expiresAtMs() > nowMs) {
                    out.add(s.entry());
                }
            }
        }
        return out;
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
