package dev.aura.realtime.cdc.join;

import dev.aura.realtime.cdc.catalog.ProjectCatalog;
import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.identity.ClientRoles;
import dev.aura.realtime.cdc.identity.ProjectIdentity;
import dev.aura.realtime.common.filter.Filter;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.Filters;
import dev.aura.realtime.common.wire.SubscriptionCheck;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * The rules a postgres_changes binding must meet at join (docs/design.md C7, docs/security.md
 * "What a subscriber receives"), apart from the casts of its filter values, which only the
 * database can decide: {@link #judge} answers {@link Outcome.Refused} with Supabase's code and
 * words, or {@link Outcome.Valid} with the casts still to run. No NATS and no tenant SQL here;
 * the facts come from a {@link Catalog} (platform SQL in production).
 */
final class BindingRules {
    /** What the rules read of the project's catalog. */
    interface Catalog {
        Optional<String> schemaOf(UUID project) throws SQLException;

        boolean enabled(UUID project, String table) throws SQLException;

        Optional<ProjectCatalog.ColumnType> columnType(String schema, String table, String column) throws SQLException;

        TableSecurity.Facts facts(UUID project, String schema, String table) throws SQLException;

        /**
         * The catalog as the platform login reads it; {@code identityReady} provisions a project's
         * database identity (whose roles the column grants are read for) before its first facts.
         */
        static Catalog of(ProjectCatalog projects, TableSecurity security, Predicate<String> identityReady) {
            return new Catalog() {
                @Override
                public Optional<String> schemaOf(UUID project) throws SQLException {
                    return projects.schemaOf(project);
                }

                @Override
                public boolean enabled(UUID project, String table) throws SQLException {
                    return projects.enabled(project, table);
                }

                @Override
                public Optional<ProjectCatalog.ColumnType> columnType(String schema, String table, String column)
                        throws SQLException {
                    return projects.columnType(schema, table, column);
                }

                @Override
                public TableSecurity.Facts facts(UUID project, String schema, String table) throws SQLException {
                    if (!identityReady.test(project.toString())) {
                        throw new SQLException("project " + project + " has no database identity yet");
                    }
                    // read now: a check is judged only when its catalog version changed (JudgedCache)
                    return security.freshFacts(project.toString(), schema, table);
                }
            };
        }
    }

    /** A filter value the database must cast to its column's type. */
    record Cast(String column, String value, ProjectCatalog.ColumnType type) {}

    /** The rules' answer. */
    sealed interface Outcome {
        /** Refused; {@code reason} is {@code "Code: message"}. */
        record Refused(String reason) implements Outcome {}

        /**
         * Valid once every cast succeeds.
         *
         * @param schema the project's schema
         * @param castRole the client role the casts run as
         * @param firstType the first filter column's typname, or null without a filter
         * @param notice a notice for the client, or null
         * @param casts the values to cast, possibly none
         */
        record Valid(String schema, String castRole, String firstType, String notice, List<Cast> casts)
                implements Outcome {
            SubscriptionCheck.Reply reply() {
                return new SubscriptionCheck.Reply(true, null, firstType, notice);
            }
        }
    }

    private final Catalog catalog;

    BindingRules(Catalog catalog) {
        this.catalog = catalog;
    }

    Outcome judge(SubscriptionCheck.Request req) throws SQLException {
        String table = req.table() == null || req.table().isEmpty() ? "*" : req.table();
        String event = req.event() == null ? "*" : req.event().toUpperCase(Locale.ROOT);
        String params =
                "[schema: public, table: " + table + ", filters: [" + (req.filter() == null ? "" : req.filter()) + "]]";
        UUID project;
        try {
            project = UUID.fromString(req.projectId());
        } catch (RuntimeException e) {
            return refused("Unauthorized: unknown project " + req.projectId());
        }
        Optional<String> found = catalog.schemaOf(project);
        if (found.isEmpty()) {
            return refused("RealtimeDisabledForConfiguration: project " + project + " is not registered for realtime");
        }
        String schema = found.get();
        boolean service = ClientRoles.SERVICE_ROLE.equals(req.role());
        String pgRole = ClientRoles.of(req.role());
        if (req.role() != null && !service && pgRole == null) {
            return refused("Unauthorized: role '" + req.role()
                    + "' cannot receive postgres_changes (anon, authenticated or service_role)");
        }
        String castRole = pgRole != null ? pgRole : ClientRoles.AUTHENTICATED;
        if (table.equals("*")) {
            if (req.filter() != null && !req.filter().isEmpty()) {
                return refused("PostgresChangesInvalidFilter: a filter needs a table, not '*'");
            }
            return new Outcome.Valid(schema, castRole, null, null, List.of());
        }
        if (!catalog.enabled(project, table)) {
            return refused("RealtimeDisabledForConfiguration: Unable to subscribe to changes with given parameters. "
                    + "Please check Realtime is enabled for the given connect parameters: " + params + " ("
                    + notEnabled(project, schema, table) + ")");
        }
        if (req.select() != null) {
            for (String column : req.select()) {
                if (catalog.columnType(schema, table, column).isEmpty()) {
                    return refused("PostgresChangesInvalidFilter: invalid column in select " + column);
                }
            }
        }
        String unauthorized = pgRole == null ? null : unauthorizedNotice(project, schema, table, pgRole, req.role());
        if (req.filter() == null || req.filter().isEmpty()) {
            return new Outcome.Valid(schema, castRole, null, unauthorized, List.of());
        }
        Filters filters;
        try {
            filters = Filters.parse(req.filter());
        } catch (FilterException e) {
            return refused("PostgresChangesInvalidFilter: " + e.getMessage());
        }
        TableSecurity.Facts facts = catalog.facts(project, schema, table);
        String notice = unauthorized;
        String firstType = null;
        List<Cast> casts = new ArrayList<>();
        for (Filter filter : filters.conditions()) {
            Optional<ProjectCatalog.ColumnType> type = catalog.columnType(schema, table, filter.column());
            if (type.isEmpty()) {
                return refused("PostgresChangesInvalidFilter: invalid column for filter " + filter.column() + ": "
                        + noSuchColumn(facts, table, filter.column(), service ? null : pgRole, req.role()));
            }
            if (firstType == null) {
                firstType = type.get().typname();
            }
            boolean checkedHere = switch (filter.op().kind()) {
                // is.true/false/unknown need a boolean column, patterns a text column (as in Postgres)
                case TRUTH_TEST, PATTERN -> true;
                // their values are cast by the database (castValues below)
                case COMPARISON, DISTINCT_FROM -> false;
            };
            if (checkedHere) {
                try {
                    filter.checkValues(type.get().typname());
                } catch (FilterException e) {
                    return refused("PostgresChangesInvalidFilter: " + e.getMessage());
                }
            }
            if (pgRole != null
                    && !facts.selectsTable().contains(pgRole)
                    && !facts.selectable(pgRole).contains(filter.column())) {
                return refused("PostgresChangesInvalidFilter: invalid column for filter " + filter.column() + ": role "
                        + req.role() + " may not select it; missing grant: "
                        + missingGrant(project, schema, table, filter.column(), pgRole));
            }
            if (!service && facts.rowSecurity() && !facts.pkColumns().contains(filter.column())) {
                String why = "table " + table + " has row level security and a deleted row cannot be checked, so"
                        + " DELETE events can only be filtered by its primary key ("
                        + String.join(", ", facts.pkColumns()) + ")";
                if (event.equals("DELETE")) {
                    return refused("PostgresChangesInvalidFilter: invalid column for DELETE filter " + filter.column()
                            + ": " + why);
                }
                if (event.equals("*") && notice == null) {
                    notice = "PostgresChangesDeleteNotDelivered: DELETE events are not delivered to the binding with"
                            + " filter " + req.filter() + ": " + why
                            + ". Subscribe to DELETE separately to receive them";
                }
            }
            for (String value : filter.castValues()) {
                casts.add(new Cast(filter.column(), value, type.get()));
            }
        }
        return new Outcome.Valid(schema, castRole, firstType, notice, List.copyOf(casts));
    }

    /**
     * Why {@code table} is not enabled and what to do (issue 40): a table that does not exist is
     * told apart from one not enabled, and both say how to enable one. The facts are read as the
     * platform login; when they cannot be read the text says only how to enable it.
     */
    private String notEnabled(UUID project, String schema, String table) {
        String enable = "enable it with PUT /v1/db/" + project + "/schema/tables/" + table
                + "/realtime {\"enabled\": true} on the cdc-worker's control API (scripts/stack.sh enable " + table
                + " on the local stack)";
        boolean exists;
        try {
            exists = catalog.facts(project, schema, table).exists();
        } catch (SQLException e) {
            exists = true;
        }
        return exists
                ? "table " + table + " is not enabled for realtime; " + enable
                : "there is no table " + table + " in this project; create it, then " + enable;
    }

    /**
     * A filter on a column {@code table} does not have: names the columns the binding's role may
     * select ({@code pgRole} null for {@code service_role}: all of them), in table order, at most
     * {@link #MAX_LISTED_COLUMNS}; never a column the role may not read.
     */
    private static String noSuchColumn(
            TableSecurity.Facts facts, String table, String column, String pgRole, String tokenRole) {
        if (!facts.exists()) {
            return "there is no table " + table + " in this project";
        }
        List<String> listed = new ArrayList<>();
        int more = 0;
        for (String c : facts.columns()) {
            if (pgRole != null
                    && !facts.selectsTable().contains(pgRole)
                    && !facts.selectable(pgRole).contains(c)) {
                continue;
            }
            if (listed.size() < MAX_LISTED_COLUMNS) {
                listed.add(c);
            } else {
                more++;
            }
        }
        String names =
                listed.isEmpty() ? "none" : String.join(", ", listed) + (more > 0 ? " and " + more + " more" : "");
        return table + " has no column " + column + "; "
                + (pgRole == null ? "its columns: " : "the columns role " + tokenRole + " may select: ") + names;
    }

    /** How many column names a refusal lists (a table may have 1,600). */
    private static final int MAX_LISTED_COLUMNS = 50;

    /**
     * The notice for a binding whose role may not select the table's primary key: accepted, as
     * Supabase accepts it, but every change arrives as {@code Error 401: Unauthorized} without
     * values, so the client is told at join which grant is missing (docs/coming-from-supabase.md).
     * Best effort: facts that cannot be read now give no notice (the binding is judged as before).
     */
    private String unauthorizedNotice(UUID project, String schema, String table, String pgRole, String tokenRole) {
        TableSecurity.Facts facts;
        try {
            facts = catalog.facts(project, schema, table);
        } catch (SQLException e) {
            return null;
        }
        if (!facts.exists() || facts.pkColumns().isEmpty() || facts.selectsKey(pgRole)) {
            return null;
        }
        return "PostgresChangesUnauthorized: role " + tokenRole + " may not select the primary key of " + table
                + ", so its changes arrive as \"Error 401: Unauthorized\" without values; missing grant: grant select"
                + " on " + ident(schema) + "." + ident(table) + " to "
                + ident(ProjectIdentity.of(project).role(pgRole));
    }

    /**
     * The statement that lets {@code pgRole} filter on {@code column}, as the project's owner runs
     * it (docs/coming-from-supabase.md, Grants): a column grant to the project's own role standing
     * for the client role (a grant on the whole table, or to the shared role, does as well).
     */
    static String missingGrant(UUID project, String schema, String table, String column, String pgRole) {
        return "grant select (" + ident(column) + ") on " + ident(schema) + "." + ident(table) + " to "
                + ident(ProjectIdentity.of(project).role(pgRole));
    }

    /** Postgres' reserved key words, which a bare identifier may not be. */
    private static final Set<String> RESERVED = Set.of(("all analyse analyze and any array as asc asymmetric"
                    + " authorization binary both case cast check collate collation column concurrently constraint"
                    + " create cross current_catalog current_date current_role current_schema current_time"
                    + " current_timestamp current_user default deferrable desc distinct do else end except false"
                    + " fetch for foreign freeze from full grant group having ilike in initially inner intersect into"
                    + " is isnull join lateral leading left like limit localtime localtimestamp natural not notnull"
                    + " null offset on only or order outer overlaps placing primary references returning right"
                    + " select session_user similar some symmetric system_user table tablesample then to trailing"
                    + " true union unique user using variadic verbose when where window with")
            .split(" "));

    /** {@code name} as SQL writes it: bare when it is a lower-case identifier and no key word, else quoted. */
    static String ident(String name) {
        return name.matches("[a-z_][a-z0-9_$]*") && !RESERVED.contains(name)
                ? name
                : "\"" + name.replace("\"", "\"\"") + "\"";
    }

    private static Outcome refused(String reason) {
        return new Outcome.Refused(reason);
    }
}
