package dev.aura.realtime.cdc.join;

import dev.aura.realtime.common.wire.SubscriptionCheck;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The join-time rules' answers ({@link BindingRules.Outcome}) per binding, each stamped with the
 * catalog version it was judged at ({@code ProjectCatalog.versions}): an answer is reused only
 * while its table's version is unchanged, so any DDL, grant or realtime setting that could change
 * it makes the next check judge again (docs/design.md C7, "Join storms"). Least recently used
 * answers go first once the entries' bytes pass {@code maxBytes}. Thread-safe.
 */
final class JudgedCache {
    /** What a binding's answer depends on besides the catalog: the request without its transport. */
    record Key(String projectId, String table, String filter, String event, String role, List<String> select) {
        static Key of(SubscriptionCheck.Request r) {
            return new Key(
                    r.projectId(),
                    r.table() == null || r.table().isEmpty() ? "*" : r.table(),
                    r.filter() == null ? "" : r.filter(),
                    r.event() == null ? "*" : r.event(),
                    r.role(),
                    r.select() == null ? null : List.copyOf(r.select()));
        }

        /** The table whose version the answer depends on. */
        String versionTable() {
            return table;
        }

        int bytes() {
            int n = 64 + 2 * (projectId.length() + table.length() + filter.length() + event.length());
            n += role == null ? 0 : 2 * role.length();
            if (select != null) {
                for (String s : select) {
                    n += 16 + 2 * s.length();
                }
            }
            return n;
        }
    }

    private record Judged(String version, BindingRules.Outcome outcome, int bytes) {}

    private final long maxBytes;
    private final LinkedHashMap<Key, Judged> entries = new LinkedHashMap<>(256, 0.75f, true);
    private long bytes;

    JudgedCache(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** The answer judged at {@code version}, or null. */
    synchronized BindingRules.Outcome get(Key key, String version) {
        Judged j = entries.get(key);
        if (j != null && j.version().equals(version)) {
            return j.outcome();
        }
        return null;
    }

    synchronized void put(Key key, String version, BindingRules.Outcome outcome) {
        int size = key.bytes() + 2 * version.length() + outcomeBytes(outcome);
        Judged old = entries.put(key, new Judged(version, outcome, size));
        bytes += size - (old == null ? 0 : old.bytes());
        Iterator<Map.Entry<Key, Judged>> it = entries.entrySet().iterator();
        while (bytes > maxBytes && it.hasNext()) {
            bytes -= it.next().getValue().bytes();
            it.remove();
        }
    }

    private static int outcomeBytes(BindingRules.Outcome outcome) {
        if (outcome instanceof BindingRules.Outcome.Refused r) {
            return 32 + 2 * r.reason().length();
        }
        BindingRules.Outcome.Valid v = (BindingRules.Outcome.Valid) outcome;
        int n = 96 + (v.notice() == null ? 0 : 2 * v.notice().length());
        for (BindingRules.Cast c : v.casts()) {
            n += 64
                    + 2
                            * (c.column().length()
                                    + c.value().length()
                                    + c.type().formatted().length());
        }
        return n;
    }
}
