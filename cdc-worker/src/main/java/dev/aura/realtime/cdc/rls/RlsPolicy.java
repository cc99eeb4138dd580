package dev.aura.realtime.cdc.rls;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.cdc.event.BuiltEvent;
import dev.aura.realtime.cdc.event.Delivery;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.cdc.metrics.CdcMetrics;
import dev.aura.realtime.cdc.platform.TableSecurity;
import dev.aura.realtime.cdc.tenant.TenantDb;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Row Level Security for postgres_changes (docs/design.md C7), checked by real reads.
 *
 * <ul>
 *   <li>Table without RLS ({@code relrowsecurity} false): every matched binding is allowed
 *       (Supabase's behaviour).
 *   <li>RLS on, INSERT/UPDATE: bindings are grouped by (role, claims); {@code service_role}
 *       sees everything; each other group costs one round trip for all the batch's changes of
 *       the table ({@link TenantDb#visibleKeys}). So round trips grow with distinct claims, not
 *       subscribers × changes.
 *   <li>RLS on, DELETE: the row is gone and cannot be checked; like Supabase, matched bindings
 *       get it with {@code old_record} cut to the primary key columns. TRUNCATE likewise.
 *   <li>Fail closed: whatever prevents a check denies the subscribers it concerns, in one way
 *       ({@link #deny}): a log line with its code ({@code RlsStateUnavailable},
 *       {@code RlsNoPrimaryKey}, {@code RlsUnknownRole}, {@code RlsCheckFailed}) and the
 *       {@code aura_cdc_rls_errors} counter. Every other subscriber still gets the change and the
 *       batch is never retried for it.
 *   <li>Postgres unreachable: not a denial but a {@link CdcFailure}, so the batch is re-read.
 * </ul>
 * Thread-safe; the RLS shards call it concurrently.
 */
public final class RlsPolicy implements AccessPolicy {
    private static final Logger log = LoggerFactory.getLogger(RlsPolicy.class);
    private final TenantDb tenant;
    private final TableSecurity security;
    private final CdcMetrics metrics;

    public RlsPolicy(TenantDb tenant, TableSecurity security, CdcMetrics metrics) {
        this.tenant = tenant;
        this.security = security;
        this.metrics = metrics;
    }

    /** The INSERT/UPDATE changes (by index in the batch) of one table that need a check. */
    private record TableCheck(TableSecurity.Facts facts, List<Integer> indexes) {}

    @Override
    public List<List<Delivery>> allowed(List<Candidates> batch) throws CdcFailure {
        List<Set<String>> out = new ArrayList<>(batch.size());
        List<View> views = new ArrayList<>(batch.size());
        Map<String, TableCheck> toCheckByTable = new LinkedHashMap<>();
        for (int i = 0; i < batch.size(); i++) {
            Candidates c = batch.get(i);
            Set<String> allowed = new HashSet<>();
            out.add(allowed);
            views.add(View.FULL);
            if (c.matched().isEmpty()) {
                continue;
            }
            BuiltEvent e = c.event();
            TableSecurity.Facts facts = facts(e, c.matched().size());
            if (facts == null) {
                continue;
            }
            if (!facts.rowSecurity()) {
                c.matched().forEach(s -> allowed.add(s.subId()));
            } else if (!"INSERT".equals(e.type()) && !"UPDATE".equals(e.type())) {
                // the row is gone and cannot be checked: reveal only its key (Supabase's rule)
                views.set(i, View.OLD_RECORD_KEY_ONLY);
                c.matched().forEach(s -> allowed.add(s.subId()));
            } else {
                toCheckByTable
                        .computeIfAbsent(
                                e.schemaName() + "\u0000" + e.table(), k -> new TableCheck(facts, new ArrayList<>()))
                        .indexes()
                        .add(i);
            }
        }
        for (TableCheck check : toCheckByTable.values()) {
            checkTable(batch, check.facts(), check.indexes(), out);
        }
        List<List<Delivery>> result = new ArrayList<>(out.size());
        for (int i = 0; i < out.size(); i++) {
            Set<String> allowed = out.get(i);
            // keep the registry's order, which is stable per binding
            List<String> ids = batch.get(i).matched().stream()
                    .map(SubscriptionEntry::subId)
                    .filter(allowed::contains)
                    .toList();
            result.add(ids.isEmpty() ? List.of() : List.of(new Delivery(views.get(i), ids)));
            metrics.rlsDenied.increment(batch.get(i).matched().size() - ids.size());
        }
        return result;
    }

    /** The table's security facts, or null (denied) when the catalog cannot be read. */
    private TableSecurity.Facts facts(BuiltEvent e, int subscriptions) throws CdcFailure {
        try {
            return security.facts(e.schemaName(), e.table());
        } catch (SQLException ex) {
            failIfUnreachable("RLS state of " + e.schemaName() + "." + e.table(), ex);
            deny(
                    LogCode.RLS_STATE_UNAVAILABLE,
                    "cannot read RLS state of " + e.schemaName() + "." + e.table() + " (" + ex.getMessage() + ")",
                    subscriptions);
            return null;
        }
    }

    /** Checks the INSERT/UPDATE changes (by index) of one table for all their matched groups. */
    private void checkTable(
            List<Candidates> batch, TableSecurity.Facts facts, List<Integer> indexes, List<Set<String>> out)
            throws CdcFailure {
        BuiltEvent first = batch.get(indexes.get(0)).event();
        if (facts.pkColumns().isEmpty()) {
            deny(
                    LogCode.RLS_NO_PRIMARY_KEY,
                    first.schemaName() + "." + first.table()
                            + " has RLS on but no primary key; changes cannot be checked",
                    indexes.stream()
                            .mapToInt(i -> batch.get(i).matched().size())
                            .sum());
            return;
        }
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
                    deny(LogCode.RLS_UNKNOWN_ROLE, "subscription " + s.subId() + " has role '" + s.role() + "'", 1);
                    continue;
                }
                String claims = s.claims() == null ? "{}" : s.claims().toString();
                Group g = groups.computeIfAbsent(pgRole + "\u0000" + claims, k -> new Group(pgRole, claims));
                g.subsByChange.computeIfAbsent(i, k -> new ArrayList<>()).add(s.subId());
            }
        }
        TenantDb.KeyedTable table =
                new TenantDb.KeyedTable(first.schemaName(), first.table(), facts.pkColumns(), facts.pkTypes());
        for (Group g : groups.values()) {
            checkGroup(batch, table, g, out);
        }
    }

    /** The bindings of one (role, claims) among a table's changes of the batch. */
    private static final class Group {
        final String pgRole;
        final String claims;
        final Map<Integer, List<String>> subsByChange = new LinkedHashMap<>();

        Group(String pgRole, String claims) {
            this.pgRole = pgRole;
            this.claims = claims;
        }
    }

    private void checkGroup(List<Candidates> batch, TenantDb.KeyedTable table, Group g, List<Set<String>> out)
            throws CdcFailure {
        Map<String, List<Integer>> changesByKey = new HashMap<>();
        for (int i : g.subsByChange.keySet()) {
            String key = keyOf(batch.get(i).event().record(), table.columns());
            if (key != null) {
                changesByKey.computeIfAbsent(key, k -> new ArrayList<>()).add(i);
            }
        }
        if (changesByKey.isEmpty()) {
            return;
        }
        try {
            metrics.rlsQueries.increment();
            Set<String> visible = tenant.visibleKeys(g.pgRole, g.claims, table, changesByKey.keySet());
            for (String key : visible) {
                for (int i : changesByKey.getOrDefault(key, List.of())) {
                    out.get(i).addAll(g.subsByChange.get(i));
                }
            }
        } catch (SQLException e) {
            failIfUnreachable("RLS check on " + table.schema() + "." + table.table(), e);
            deny(
                    LogCode.RLS_CHECK_FAILED,
                    table.schema() + "." + table.table() + " role " + g.pgRole + " claims " + abbreviate(g.claims)
                            + ": SQLState " + e.getSQLState() + ": " + e.getMessage(),
                    g.subsByChange.values().stream().mapToInt(List::size).sum());
        }
    }

    /**
     * The one way subscribers are denied for a reason other than their policy: logged with the
     * code, counted in {@code aura_cdc_rls_errors}.
     */
    private void deny(LogCode code, String detail, int subscriptions) {
        metrics.rlsErrors.increment();
        log.warn("[{}] {}; denied for {} subscription(s)", code, detail, subscriptions);
    }

    /** A connection failure says nothing about any subscriber: fail the batch so it is re-read. */
    private static void failIfUnreachable(String what, SQLException e) throws CdcFailure {
        if (CdcFailure.isConnectionFailure(e)) {
            throw CdcFailure.retriable(CdcReason.POSTGRES_UNAVAILABLE, what + ": " + e.getMessage(), e);
        }
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

    private static String abbreviate(String s) {
        return s.length() > 200 ? s.substring(0, 200) + "..." : s;
    }
}
