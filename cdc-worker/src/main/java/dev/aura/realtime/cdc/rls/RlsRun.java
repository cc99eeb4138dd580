package dev.aura.realtime.cdc.rls;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.cdc.rls.AccessPolicy.Candidates;
import dev.aura.realtime.cdc.rls.AccessPolicy.Decision;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import io.micrometer.core.instrument.Counter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One call of {@link RlsPolicy#decide}: the changes of one shard batch, whom each is allowed to
 * and with which view, the groups of subscribers still to be checked by a query, and which changes
 * and projects are late. Owned by the one thread that makes the call.
 */
final class RlsRun {
    /** The subscribers of one (table, role, claims) among a run's INSERT/UPDATE changes, and their views. */
    record Group(
            String projectId,
            KeyChecks.KeyedTable table,
            String pgRole,
            String claims,
            Map<Integer, List<String>> subsByChange,
            Map<Integer, View> viewByChange) {
        /** How many of the group's subscriptions the changes of {@code keys} hold. */
        int subscriptions(Collection<String> keys, Map<String, List<Integer>> byKey) {
            int n = 0;
            for (String k : keys) {
                for (int i : byKey.getOrDefault(k, List.of())) {
                    n += subsByChange.get(i).size();
                }
            }
            return n;
        }

        /** The group in log lines: identifiers only, never the claims (a user's data). */
        String describe() {
            return table.schema() + "." + table.table() + " role " + pgRole;
        }
    }

    /**
     * What files a (change, binding) into a {@link Group}. A record, not a concatenated string: its
     * parts keep their cached hashes (the claims text is one instance per binding's claims in a
     * run), so filing 1,000 bindings of each change costs no string building or hashing.
     */
    private record GroupKey(String schema, String table, String pgRole, String claims) {}

    final List<Candidates> batch;
    private final List<Map<String, View>> allowed = new ArrayList<>();
    private final Map<GroupKey, Group> groups = new LinkedHashMap<>();
    /** Projects whose check timed out in this run (shared lane): their undecided changes are late. */
    final Set<String> lateProjects = new HashSet<>();
    /** Changes that go to their project's late lane. */
    private final Set<Integer> late = new HashSet<>();
    /** Per change, the subscribers whose check timed out alone (late lane). */
    private final Map<Integer, List<String>> timedOut = new HashMap<>();
    /** Per project, the time its checks took in this run (the shared lane's budget, C14). */
    private final Map<String, Long> usedNanos = new HashMap<>();
    /** Each binding's claims as JSON text, serialised once per run (not once per change). */
    private final Map<JsonNode, String> claimsText = new IdentityHashMap<>();
    /** The {@code select} of the matched bindings that have one. */
    private final Map<String, List<String>> selectBySub = new HashMap<>();

    /** Adds a check's time to its project's. */
    void used(String projectId, long nanos) {
        usedNanos.merge(projectId, nanos, Long::sum);
    }

    long usedNanos(String projectId) {
        return usedNanos.getOrDefault(projectId, 0L);
    }

    /** What is left of the project's budget in this run. */
    long budgetLeft(String projectId, long budgetNanos) {
        return budgetNanos - usedNanos(projectId);
    }

    RlsRun(List<Candidates> batch) {
        this.batch = batch;
        batch.forEach(c -> allowed.add(new HashMap<>()));
        for (Candidates c : batch) {
            for (SubscriptionEntry s : c.matched()) {
                if (s.select() != null) {
                    selectBySub.put(s.subId(), s.select());
                }
            }
        }
    }

    /** Allows a change to a subscriber with its view, narrowed to the binding's {@code select}. */
    void allow(int change, String subId, View view) {
        List<String> select = selectBySub.get(subId);
        allowed.get(change).put(subId, select == null ? view : ViewRules.select(view, select));
    }

    /** Files change {@code i}'s subscriber {@code s} (of client role {@code pgRole}) into its group, to be checked. */
    void file(int i, BuiltEvent e, SubscriptionEntry s, String pgRole, TableSecurity.Facts facts, View view) {
        String claims = s.claims() == null ? "{}" : claimsText.computeIfAbsent(s.claims(), JsonNode::toString);
        Group g = groups.computeIfAbsent(
                new GroupKey(e.schemaName(), e.table(), pgRole, claims),
                k -> new Group(
                        e.projectId(),
                        new KeyChecks.KeyedTable(e.schemaName(), e.table(), facts.pkColumns(), facts.pkTypes()),
                        pgRole,
                        claims,
                        new LinkedHashMap<>(),
                        new HashMap<>()));
        g.subsByChange().computeIfAbsent(i, k -> new ArrayList<>()).add(s.subId());
        g.viewByChange().put(i, view);
    }

    Collection<Group> groups() {
        return groups.values();
    }

    /** The group's changes by primary key (as {@link #keyOf}); a change whose key is missing is in none. */
    Map<String, List<Integer>> changesByKey(Group g) {
        Map<String, List<Integer>> changesByKey = new LinkedHashMap<>();
        for (int i : g.subsByChange().keySet()) {
            String key = keyOf(batch.get(i).event().record(), g.table().columns());
            if (key != null) {
                changesByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
            }
        }
        return changesByKey;
    }

    /** Allows these changes (a visible key's) to the group's subscribers, each with its view. */
    void allowKey(Group g, List<Integer> changes) {
        if (changes == null) {
            return;
        }
        for (int i : changes) {
            View view = g.viewByChange().get(i);
            g.subsByChange().get(i).forEach(sub -> allow(i, sub, view));
        }
    }

    /** The changes go to the late lane (shared lane: the project's time for the run is spent). */
    void late(Collection<List<Integer>> changes) {
        changes.forEach(late::addAll);
    }

    /** The group's subscribers of these changes could not be checked even alone (late lane). */
    void timedOut(Group g, List<Integer> changes) {
        for (int i : changes) {
            timedOut.computeIfAbsent(i, k -> new ArrayList<>())
                    .addAll(g.subsByChange().get(i));
        }
    }

    /**
     * What was decided for each change of the batch, in order: one delivery per distinct view,
     * subscribers in the registry's order (stable per binding); counts the denied pairs.
     */
    List<Decision> decisions(Counter denied) {
        List<Decision> result = new ArrayList<>(batch.size());
        for (int i = 0; i < batch.size(); i++) {
            if (late.contains(i)) {
                result.add(Decision.LATE);
                continue;
            }
            Map<String, View> allowedTo = allowed.get(i);
            Map<View, List<String>> byView = new LinkedHashMap<>();
            for (SubscriptionEntry s : batch.get(i).matched()) {
                View v = allowedTo.get(s.subId());
                if (v != null) {
                    byView.computeIfAbsent(v, k -> new ArrayList<>()).add(s.subId());
                }
            }
            List<Delivery> deliveries = new ArrayList<>(byView.size());
            byView.forEach((v, ids) -> deliveries.add(new Delivery(v, ids)));
            List<String> timedOutSubs = timedOut.getOrDefault(i, List.of());
            result.add(new Decision(deliveries, timedOutSubs, false));
            denied.increment(batch.get(i).matched().size() - allowedTo.size() - timedOutSubs.size());
        }
        return result;
    }

    /** The primary key of a row as text values joined by NUL, or null when a key column is missing. */
    private static String keyOf(JsonNode row, List<String> pkColumns) {
        if (row == null) {
            return null;
        }
        StringBuilder k = new StringBuilder();
        for (int c = 0; c < pkColumns.size(); c++) {
            JsonNode v = row.get(pkColumns.get(c));
            if (v == null || v.isNull()) {
                return null;
            }
            k.append(c == 0 ? "" : "\u0000").append(v.isTextual() ? v.asText() : v.toString());
        }
        return k.toString();
    }
}
