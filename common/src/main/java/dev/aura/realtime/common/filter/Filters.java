package dev.aura.realtime.common.filter;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A postgres_changes filter: one or more {@link Filter} conditions separated by top-level commas,
 * all of which must hold (AND), as realtime-js's {@code RealtimePostgresFilterBuilder.build()}
 * joins them. Commas inside a double-quoted value or inside {@code in.(...)} do not separate
 * conditions. Patterns are compiled once, here. Immutable and thread-safe.
 */
public final class Filters {
    /** At most this many conditions in one filter. */
    public static final int MAX_CONDITIONS = 16;

    private final List<Filter> conditions;
    private final List<TextPattern> patterns;

    private Filters(List<Filter> conditions, List<TextPattern> patterns) {
        this.conditions = conditions;
        this.patterns = patterns;
    }

    /**
     * @throws FilterException when a condition is malformed, there are too many, or a pattern is
     *     invalid or too costly
     */
    public static Filters parse(String text) throws FilterException {
        if (text == null || text.isBlank()) {
            throw new FilterException("filter is empty");
        }
        List<Filter> conditions = new ArrayList<>();
        List<TextPattern> patterns = new ArrayList<>();
        for (String part : split(text)) {
            if (conditions.size() == MAX_CONDITIONS) {
                throw new FilterException("invalid filter: more than " + MAX_CONDITIONS + " conditions");
            }
            Filter f = Filter.parse(part);
            conditions.add(f);
            patterns.add(f.op().isPattern() ? f.pattern() : null);
        }
        return new Filters(List.copyOf(conditions), java.util.Collections.unmodifiableList(patterns));
    }

    /** Splits at commas outside double quotes (backslash escapes inside them) and outside parentheses. */
    static List<String> split(String text) throws FilterException {
        List<String> out = new ArrayList<>();
        int depth = 0;
        boolean quoted = false;
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted) {
                if (c == '\\') {
                    i++;
                } else if (c == '"') {
                    quoted = false;
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth = Math.max(0, depth - 1);
            } else if (c == ',' && depth == 0) {
                out.add(text.substring(start, i));
                start = i + 1;
            }
        }
        if (quoted) {
            throw new FilterException("invalid filter '" + text + "': unterminated quote");
        }
        if (depth != 0) {
            throw new FilterException("invalid filter '" + text + "': unbalanced parenthesis");
        }
        out.add(text.substring(start));
        return out;
    }

    public List<Filter> conditions() {
        return conditions;
    }

    /** The columns the conditions test, in order, without repeats. */
    public List<String> columns() {
        return conditions.stream().map(Filter::column).distinct().toList();
    }

    /**
     * @param record the row the filter tests (new row, or the old one for DELETE)
     * @param columnTypes typname by column
     * @return whether every condition holds
     */
    public boolean matches(JsonNode record, Map<String, String> columnTypes) {
        for (int i = 0; i < conditions.size(); i++) {
            Filter f = conditions.get(i);
            if (!f.matches(record, columnTypes.get(f.column()), patterns.get(i))) {
                return false;
            }
        }
        return true;
    }

    /** The first plain {@code eq} condition (not negated), or null: what the registry indexes by. */
    public Filter firstEq() {
        for (Filter f : conditions) {
            if (f.op() == FilterOp.EQ && !f.negated()) {
                return f;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return String.join(",", conditions.stream().map(Filter::toString).toList());
    }
}
