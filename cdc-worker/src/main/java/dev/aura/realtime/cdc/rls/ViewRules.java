package dev.aura.realtime.cdc.rls;

import dev.aura.realtime.cdc.catalog.TableSecurity;
import dev.aura.realtime.cdc.event.View;
import dev.aura.realtime.common.filter.FilterException;
import dev.aura.realtime.common.filter.Filters;
import java.util.List;
import java.util.Set;

/**
 * What a subscriber of a client role may see of a change, from the table's grants and row level
 * security alone (docs/design.md C7, docs/security.md); the RLS check then decides whether it sees
 * the change at all. Stateless.
 */
final class ViewRules {
    /** Supabase's error for a role that cannot select the table's primary key. */
    static final String UNAUTHORIZED = "Error 401: Unauthorized";

    /** Nothing readable: no column of {@code record}, {@code old_record} or {@code columns}, and the error. */
    static final View UNAUTHORIZED_VIEW = new View(Set.of(), false, List.of(UNAUTHORIZED));

    private ViewRules() {}

    static boolean rowChange(String type) {
        return "INSERT".equals(type) || "UPDATE".equals(type);
    }

    /** {@code service_role}: every column; {@code old_record} of an unchecked change cut to the key. */
    static View serviceView(TableSecurity.Facts facts, String type) {
        return facts.rowSecurity() && !rowChange(type) ? View.OLD_RECORD_KEY_ONLY : View.FULL;
    }

    /**
     * A client role's view: only the columns it may select (every column, also future ones, when
     * it may select the whole table); {@link #UNAUTHORIZED_VIEW} for an INSERT or UPDATE when it
     * cannot select every primary-key column (as Supabase does); {@code old_record} cut to the key
     * when the change cannot be checked (DELETE, TRUNCATE on a table with row level security).
     */
    static View clientView(TableSecurity.Facts facts, String pgRole, String type) {
        boolean keyOnly = facts.rowSecurity() && !rowChange(type);
        if (rowChange(type)
                && !facts.pkColumns().isEmpty()
                && !facts.selectsTable().contains(pgRole)
                && !facts.selectable(pgRole).containsAll(facts.pkColumns())) {
            return UNAUTHORIZED_VIEW;
        }
        if (facts.selectsTable().contains(pgRole)) {
            return keyOnly ? View.OLD_RECORD_KEY_ONLY : View.FULL;
        }
        return new View(facts.selectable(pgRole), keyOnly, List.of());
    }

    /**
     * A view narrowed to a binding's {@code select} columns: the intersection with what the role
     * may read (docs/design.md C7). The primary key the RLS check needs is read from the change,
     * not from the view, so it is still checked when not selected.
     */
    static View select(View view, List<String> select) {
        Set<String> columns = new java.util.HashSet<>(select);
        if (view.columns() != null) {
            columns.retainAll(view.columns());
        }
        return new View(columns, view.oldRecordKeyOnly(), view.errors());
    }

    /**
     * Whether delivering this change to a binding with this filter would reveal a value its role
     * may not read: the filter tests a column the role may not select (a match tells the value),
     * or a non-key column of a DELETE on a table with row level security (the deleted row cannot be
     * checked, so only its key may be revealed). Such bindings are refused at join; this catches
     * grants and RLS changed since. A filter that does not parse reveals (it matches nothing anyway).
     */
    static boolean filterReveals(String filterText, TableSecurity.Facts facts, String pgRole, String type) {
        if (filterText == null || filterText.isEmpty()) {
            return false;
        }
        java.util.List<String> columns;
        try {
            columns = Filters.parse(filterText).columns();
        } catch (FilterException e) {
            return true;
        }
        for (String column : columns) {
            if (!facts.selectsTable().contains(pgRole)
                    && !facts.selectable(pgRole).contains(column)) {
                return true;
            }
            if (facts.rowSecurity()
                    && "DELETE".equals(type)
                    && !facts.pkColumns().contains(column)) {
                return true;
            }
        }
        return false;
    }
}
