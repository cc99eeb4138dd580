package dev.aura.realtime.cdc.rls;

import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.cdc.tenant.RunnerSession;
import dev.aura.realtime.cdc.tenant.TenantDb;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The RLS checks' tenant SQL (docs/design.md C7): which keys of a table the project's client role
 * with a claim set may read, asked of the table's own policies in one read-only statement through
 * the project's runner ({@link KeyQueries}), on the tenant session ({@link TenantDb#session}).
 * Thread-safe (stateless).
 */
final class KeyChecks {
    /** A table's primary key, as {@code format_type} names usable in casts. */
    record KeyedTable(String schema, String table, List<String> columns, List<String> types) {}

    /** The outcome of an RLS check. */
    sealed interface Verdict {
        /**
         * @param keys the visible keys
         * @param failedKeys keys whose own check raised, with the SQLSTATE ({@link #visibleEach} only)
         */
        record Visible(Set<String> keys, Map<String, String> failedKeys) implements Verdict {}

        record Failed(TenantDb.Failure failure) implements Verdict {}
    }

    private final TenantDb tenant;

    KeyChecks(TenantDb tenant) {
        this.tenant = tenant;
    }

    /**
     * Which of {@code keys} the project's {@code clientRole} with these claims may read, in one
     * statement through the project's runner ({@link KeyQueries#batch}); the table's policies decide.
     *
     * @param keys primary keys, each as its column values (as text) joined by NUL
     * @param timeout the statement's {@code statement_timeout} (at most the configured one)
     * @throws TenantDb.Unavailable when Postgres did not answer
     */
    Verdict visibleKeys(
            ProjectIdentity project,
            String clientRole,
            String claims,
            KeyedTable table,
            Collection<String> keys,
            Duration timeout)
            throws TenantDb.Unavailable {
        if (keys.isEmpty()) {
            return new Verdict.Visible(Set.of(), Map.of());
        }
        List<String> ordered = List.copyOf(keys);
        try {
            Set<String> visible = tenant.session(claims, table.schema(), timeout, RunnerSession.Mode.READ_ONLY, s -> {
                Set<String> out = new HashSet<>();
                for (String[] row : s.viaRunner(
                        project.runner(clientRole),
                        KeyQueries.batch(table, ordered.size()),
                        byColumn(ordered, table.columns().size()))) {
                    if (row.length > 0 && row[0] != null) { // null: no key equals the row (not asked)
                        out.add(ordered.get(Integer.parseInt(row[0]) - 1));
                    }
                }
                return out;
            });
            return new Verdict.Visible(visible, Map.of());
        } catch (RunnerSession.TenantFailure f) {
            return new Verdict.Failed(f.failure());
        }
    }

    /**
     * Like {@link #visibleKeys}, but each key checked on its own inside one statement
     * ({@code aura_rls.visible_each}): a key whose check raises is reported in
     * {@link Verdict.Visible#failedKeys} and the others are still decided. Only a timeout fails the
     * whole call.
     */
    Verdict visibleEach(
            ProjectIdentity project,
            String clientRole,
            String claims,
            KeyedTable table,
            List<String> keys,
            Duration timeout)
            throws TenantDb.Unavailable {
        Object[] flat = flatten(keys);
        Object[] args = new Object[flat.length + 1];
        args[0] = KeyQueries.single(table);
        System.arraycopy(flat, 0, args, 1, flat.length);
        try {
            return tenant.session(claims, table.schema(), timeout, RunnerSession.Mode.READ_ONLY, s -> {
                Set<String> visible = new HashSet<>();
                Map<String, String> failed = new HashMap<>();
                for (String[] row : s.viaRunner(
                        project.runner(clientRole),
                        KeyQueries.each(table.columns().size()),
                        args)) {
                    String key = keys.get(Integer.parseInt(row[0]) - 1);
                    if (row[2] != null) {
                        failed.put(key, row[2]);
                    } else if ("true".equals(row[1])) {
                        visible.add(key);
                    }
                }
                return new Verdict.Visible(visible, failed);
            });
        } catch (RunnerSession.TenantFailure f) {
            return new Verdict.Failed(f.failure());
        }
    }

    /** The keys' column values, column after column (for {@link KeyQueries#batch}). */
    private static Object[] byColumn(List<String> keys, int n) {
        Object[] out = new Object[keys.size() * n];
        for (int k = 0; k < keys.size(); k++) {
            String[] parts = keys.get(k).split("\u0000", -1);
            for (int c = 0; c < n; c++) {
                out[c * keys.size() + k] = parts[c];
            }
        }
        return out;
    }

    /** The keys' column values, key after key. */
    private static Object[] flatten(List<String> keys) {
        return keys.stream()
                .flatMap(k -> List.of(k.split("\u0000", -1)).stream())
                .toArray();
    }
}
