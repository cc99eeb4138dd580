package dev.aura.realtime.cdc.rls;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.pipeline.BuiltEvent;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Row Level Security for postgres_changes (PRODUCT.md C7), checked by real reads.
 *
 * <ul>
 *   <li>Table without RLS ({@code relrowsecurity} false): every matched binding is allowed
 *       (Supabase's behaviour).
 *   <li>RLS on, INSERT/UPDATE: bindings are grouped by (role, claims); {@code service_role}
 *       sees everything; each other group costs one round trip for all the batch's changes of
 *       the table: {@code BEGIN; SET LOCAL ROLE aura_anon|aura_authenticated;
 *       set_config('request.jwt.claims', claims, true); SELECT pk FROM t WHERE pk = ANY(...);
 *       ROLLBACK}. So round trips grow with distinct claims, not subscribers × changes.
 *   <li>RLS on, DELETE: the row is gone and cannot be checked; like Supabase, matched bindings
 *       get it with {@code old_record} cut to the primary key columns. TRUNCATE likewise.
 *   <li>Fail closed per group: if a group's check raises (e.g. a policy casting a claim that is
 *       not a uuid), that group is denied, the error is logged with code {@code RlsCheckFailed}
 *       and counted; every other group still gets the change and the batch is never retried for it.
 *   <li>Any role other than anon/authenticated/service_role is denied ({@code RlsUnknownRole}).
 * </ul>
 * Thread-safe; the RLS shards call it concurrently.
 */
public final class RlsPolicy implements AccessPolicy {
    private static final Logger log = LoggerFactory.getLogger(RlsPolicy.class);
    private final DataSource db;
    private final TableSecurity security;
    private final CdcMetrics metrics;
    private final boolean naive;

    /**
     * @param naive benchmark baseline: one query per (change, subscriber), as the reference server does
     */
    public RlsPolicy(DataSource db, TableSecurity security, CdcMetrics metrics, boolean naive) {
        this.db = db;
        this.security = security;
        this.metrics = metrics;
        this.naive = naive;
    }

    @Override
    public List<List<String>> allowed(List<Candidates> batch) {
        List<Set<String>> out = new ArrayList<>(batch.size());
        Map<String, List<Integer>> toCheckByTable = new LinkedHashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            Candidates c = batch.get(i);
            out.add(new HashSet<>());
            if (c.matched().isEmpty()) {
                continue;
            }
            BuiltEvent e = c.event();
            TableSecurity.Facts facts;
            try {
                facts = security.facts(e.schemaName(), e.table());
            } catch (SQLException ex) {
                RlsUnavailableException.rethrowIfUnavailable("RLS state of " + e.schemaName() + "." + e.table(), ex);
                log.warn(
                        "RlsStateUnavailable: cannot read RLS state of {}.{} ({}); denying",
                        e.schemaName(),
                        e.table(),
                        ex.getMessage());
                metrics.rlsErrors.increment();
                continue;
            }
            if (!facts.rowSecurity()) {
                c.matched().forEach(s -> out.get(out.size() - 1).add(s.subId()));
            } else if (!"INSERT".equals(e.type()) && !"UPDATE".equals(e.type())) {
                cutOldRecordToKey(e, facts);
                c.matched().forEach(s -> out.get(out.size() - 1).add(s.subId()));
            } else {
                toCheckByTable
                        .computeIfAbsent(e.schemaName() + "\u0000" + e.table(), k -> new ArrayList<>())
                        .add(i);
            }
        }
        for (List<Integer> indexes : toCheckByTable.values()) {
            checkTable(batch, indexes, out);
        }
        List<List<String>> result = new ArrayList<>(out.size());
        for (int i = 0; i < out.size(); i++) {
            Set<String> allowed = out.get(i);
            // keep the registry's order, which is stable per binding
            result.add(batch.get(i).matched().stream()
                    .map(SubscriptionEntry::subId)
                    .filter(allowed::contains)
                    .toList());
            metrics.rlsDenied.increment(
                    batch.get(i).matched().size() - result.get(i).size());
        }
        return result;
    }

    /** Checks the INSERT/UPDATE changes (by index) of one table for all their matched groups. */
    private void checkTable(List<Candidates> batch, List<Integer> indexes, List<Set<String>> out) {
        BuiltEvent first = batch.get(indexes.get(0)).event();
        TableSecurity.Facts facts;
        try {
            facts = security.facts(first.schemaName(), first.table());
        } catch (SQLException e) {
            RlsUnavailableException.rethrowIfUnavailable("RLS state of " + first.schemaName() + "." + first.table(), e);
            return;
        }
        if (facts.pkColumns().isEmpty()) {
            log.warn(
                    "RlsNoPrimaryKey: {}.{} has RLS on but no primary key; changes cannot be checked and are denied",
                    first.schemaName(),
                    first.table());
            return;
        }
        // group key -> (role, claims json, subIds, change indexes)
        Map<String, Group> groups = new LinkedHashMap<>();
        for (int i : indexes) {
            for (SubscriptionEntry s : batch.get(i).matched()) {
                if ("service_role".equals(s.role())) {
                    out.get(i).add(s.subId());
                    continue;
                }
                String pgRole = switch (String.valueOf(s.role())) {
                    case "anon" -> "aura_anon";
                    case "authenticated" -> "aura_authenticated";
                    default -> null;
                };
                if (pgRole == null) {
                    log.warn("RlsUnknownRole: subscription {} has role '{}'; denied", s.subId(), s.role());
                    continue;
                }
                String claims = s.claims() == null ? "{}" : s.claims().toString();
                Group g = groups.computeIfAbsent(pgRole + "\u0000" + claims, k -> new Group(pgRole, claims));
                g.subsByChange.computeIfAbsent(i, k -> new ArrayList<>()).add(s.subId());
            }
        }
        for (Group g : groups.values()) {
            if (naive) {
                checkNaive(batch, facts, first, g, out);
            } else {
                checkGroup(batch, facts, first, g, out);
            }
        }
    }

    private static final class Group {
        final String pgRole;
        final String claims;
        final Map<Integer, List<String>> subsByChange = new LinkedHashMap<>();

        Group(String pgRole, String claims) {
            this.pgRole = pgRole;
            this.claims = claims;
        }
    }

    private void checkGroup(
            List<Candidates> batch, TableSecurity.Facts facts, BuiltEvent table, Group g, List<Set<String>> out) {
        Map<String, List<Integer>> changesByKey = new HashMap<>();
        for (int i : g.subsByChange.keySet()) {
            String key = keyOf(batch.get(i).event().record(), facts);
            if (key != null) {
                changesByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
            }
        }
        try {
            Set<String> visible = visibleKeys(table, facts, g, changesByKey.keySet());
            for (String key : visible) {
                for (int i : changesByKey.getOrDefault(key, List.of())) {
                    out.get(i).addAll(g.subsByChange.get(i));
                }
            }
        } catch (SQLException e) {
            RlsUnavailableException.rethrowIfUnavailable("RLS check on " + table.schemaName() + "." + table.table(), e);
            metrics.rlsErrors.increment();
            log.warn(
                    "RlsCheckFailed: {}.{} role {} claims {}: SQLState {}: {}; denied for {} subscription(s)",
                    table.schemaName(),
                    table.table(),
                    g.pgRole,
                    abbreviate(g.claims),
                    e.getSQLState(),
                    e.getMessage(),
                    g.subsByChange.values().stream().mapToInt(List::size).sum());
        }
    }

    private void checkNaive(
            List<Candidates> batch, TableSecurity.Facts facts, BuiltEvent table, Group g, List<Set<String>> out) {
        for (Map.Entry<Integer, List<String>> e : g.subsByChange.entrySet()) {
            String key = keyOf(batch.get(e.getKey()).event().record(), facts);
            for (String sub : e.getValue()) {
                try {
                    if (key != null && visibleKeys(table, facts, g, Set.of(key)).contains(key)) {
                        out.get(e.getKey()).add(sub);
                    }
                } catch (SQLException ex) {
                    RlsUnavailableException.rethrowIfUnavailable(
                            "RLS check on " + table.schemaName() + "." + table.table(), ex);
                    metrics.rlsErrors.increment();
                }
            }
        }
    }

    /** One rolled-back transaction under the group's role and claims. */
    private Set<String> visibleKeys(BuiltEvent table, TableSecurity.Facts facts, Group g, Set<String> keys)
            throws SQLException {
        Set<String> visible = new HashSet<>();
        if (keys.isEmpty()) {
            return visible;
        }
        int n = facts.pkColumns().size();
        StringBuilder sql = new StringBuilder("SELECT ");
        for (int c = 0; c < n; c++) {
            sql.append(c == 0 ? "" : ", ")
                    .append(ident(facts.pkColumns().get(c)))
                    .append("::text");
        }
        sql.append(" FROM ")
                .append(ident(table.schemaName()))
                .append('.')
                .append(ident(table.table()))
                .append(" WHERE ");
        if (n == 1) {
            sql.append(ident(facts.pkColumns().get(0)))
                    .append(" = ANY(?::text[]::")
                    .append(facts.pkTypes().get(0))
                    .append("[])");
        } else {
            sql.append('(');
            for (int c = 0; c < n; c++) {
                sql.append(c == 0 ? "" : ", ").append(ident(facts.pkColumns().get(c)));
            }
            sql.append(") IN (SELECT ");
            for (int c = 0; c < n; c++) {
                sql.append(c == 0 ? "" : ", ")
                        .append("k")
                        .append(c)
                        .append("::")
                        .append(facts.pkTypes().get(c));
            }
            sql.append(" FROM unnest(");
            for (int c = 0; c < n; c++) {
                sql.append(c == 0 ? "" : ", ").append("?::text[]");
            }
            sql.append(") AS u(");
            for (int c = 0; c < n; c++) {
                sql.append(c == 0 ? "" : ", ").append("k").append(c);
            }
            sql.append("))");
        }
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (Statement s = c.createStatement()) {
                    s.execute("SET LOCAL ROLE " + g.pgRole);
                }
                try (PreparedStatement ps = c.prepareStatement("SELECT set_config('request.jwt.claims', ?, true)")) {
                    ps.setString(1, g.claims);
                    ps.execute();
                }
                try (PreparedStatement ps = c.prepareStatement(sql.toString())) {
                    List<String[]> parts =
                            keys.stream().map(k -> k.split("\u0000", -1)).toList();
                    for (int col = 0; col < n; col++) {
                        final int cc = col;
                        Array arr = c.createArrayOf(
                                "text", parts.stream().map(p -> p[cc]).toArray());
                        ps.setArray(col + 1, arr);
                    }
                    metrics.rlsQueries.increment();
                    try (ResultSet rs = ps.executeQuery()) {
                        while (rs.next()) {
                            StringBuilder k = new StringBuilder();
                            for (int col = 1; col <= n; col++) {
                                k.append(col == 1 ? "" : "\u0000").append(rs.getString(col));
                            }
                            visible.add(k.toString());
                        }
                    }
                }
            } finally {
                c.rollback();
                c.setAutoCommit(true);
            }
        }
        return visible;
    }

    /** The primary key of a row as text values joined by NUL, or null when a key column is missing. */
    private static String keyOf(JsonNode row, TableSecurity.Facts facts) {
        if (row == null) {
            return null;
        }
        StringBuilder k = new StringBuilder();
        for (int c = 0; c < facts.pkColumns().size(); c++) {
            JsonNode v = row.get(facts.pkColumns().get(c));
            if (v == null || v.isNull()) {
                return null;
            }
            k.append(c == 0 ? "" : "\u0000").append(v.isTextual() ? v.asText() : v.toString());
        }
        return k.toString();
    }

    private static void cutOldRecordToKey(BuiltEvent e, TableSecurity.Facts facts) {
        JsonNode old = e.data().get("old_record");
        if (old instanceof ObjectNode oldObj) {
            oldObj.retain(facts.pkColumns());
        }
    }

    private static String ident(String name) {
        return "\"" + name.replace("\"", "\"\"") + "\"";
    }

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
