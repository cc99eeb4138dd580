package dev.aura.realtime.common.filter;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * One condition of a postgres_changes filter ({@link Filters} is the comma-separated AND list), in
 * the syntax realtime-js's {@code RealtimePostgresFilterBuilder} writes: {@code column=op.value} or
 * {@code column=not.op.value}, with op one of {@link FilterOp}; {@code in.(v1,v2,...)} takes 1 to
 * {@value #MAX_IN_VALUES} values. A value holding {@code , ( ) " \} or outer spaces is
 * double-quoted with {@code \"} and {@code \\} escapes (PostgREST's quoting); anything else is
 * verbatim. Semantics follow Postgres for the column's type (docs/protocol.md "Filters"): numbers
 * numerically and exactly, booleans, timestamps as instants, uuids case-insensitively, text by
 * code point (the {@code C} collation); a NULL column matches only {@code is} and
 * {@code isdistinct} (and their negations); {@code like}/{@code ilike}/{@code match}/{@code imatch}
 * run as a bounded {@link TextPattern}.
 *
 * <p>Immutable and thread-safe. {@link #parse} rejects malformed text; {@link #checkValues}
 * rejects values that cannot be read as the column's type, so bad filters fail at join time.
 *
 * @param negated the {@code not.} prefix
 */
public record Filter(String column, FilterOp op, boolean negated, List<String> values) {
    /** The maximum number of values of an {@code in} filter (Supabase's limit). */
    public static final int MAX_IN_VALUES = 100;

    /** Types {@code like}/{@code match} apply to, as in Postgres (other types have no such operator). */
    public static final Set<String> STRING_TYPES = Set.of("text", "varchar", "bpchar", "name", "citext");

    private static final Set<String> IS_VALUES = Set.of("null", "true", "false", "unknown");

    public Filter {
        values = List.copyOf(values);
    }

    public Filter(String column, FilterOp op, List<String> values) {
        this(column, op, false, values);
    }

    /**
     * Parses one condition (no top-level commas; see {@link Filters#parse} for lists).
     *
     * @throws FilterException when the text is not {@code col=[not.]op.value} with a known operator
     */
    public static Filter parse(String text) throws FilterException {
        if (text == null || text.isBlank()) {
            throw new FilterException("filter is empty");
        }
        int eq = text.indexOf('=');
        if (eq <= 0) {
            throw new FilterException("invalid filter '" + text + "': expected column=op.value");
        }
        String column = text.substring(0, eq);
        String rest = text.substring(eq + 1);
        boolean negated = rest.startsWith("not.");
        if (negated) {
            rest = rest.substring(4);
        }
        int dot = rest.indexOf('.');
        if (dot <= 0) {
            throw new FilterException("invalid filter '" + text + "': expected column=op.value");
        }
        FilterOp op = FilterOp.fromWire(rest.substring(0, dot));
        if (op == null) {
            throw new FilterException("invalid filter '" + text + "': unknown operator " + rest.substring(0, dot));
        }
        String value = rest.substring(dot + 1);
        List<String> values = switch (op) {
            case IS -> List.of(isKeyword(value, text));
            case IN -> inList(value, text);
            case EQ, NEQ, LT, LTE, GT, GTE, LIKE, ILIKE, MATCH, IMATCH, ISDISTINCT -> List.of(unquote(value, text));
        };
        return new Filter(column, op, negated, values);
    }

    private static String isKeyword(String value, String text) throws FilterException {
        if (!IS_VALUES.contains(value.toLowerCase(Locale.ROOT))) {
            throw new FilterException(
                    "invalid filter '" + text + "': is takes null, true, false or unknown, not '" + value + "'");
        }
        return value.toLowerCase(Locale.ROOT);
    }

    private static List<String> inList(String value, String text) throws FilterException {
        if (value.length() < 2 || value.charAt(0) != '(' || value.charAt(value.length() - 1) != ')') {
            throw new FilterException("invalid filter '" + text + "': in expects (v1,v2,...)");
        }
        List<String> items = splitList(value.substring(1, value.length() - 1));
        if (items.isEmpty() || items.size() > MAX_IN_VALUES) {
            throw new FilterException("invalid filter '" + text + "': in takes 1 to " + MAX_IN_VALUES + " values");
        }
        return items;
    }

    /** A scalar value: verbatim, or double-quoted with backslash escapes (the whole value). */
    private static String unquote(String value, String text) throws FilterException {
        if (value.isEmpty() || value.charAt(0) != '"') {
            return value;
        }
        StringBuilder out = new StringBuilder(value.length());
        for (int i = 1; i < value.length(); i++) {
            char c = value.charAt(i);
            if (c == '\\' && i + 1 < value.length()) {
                out.append(value.charAt(++i));
            } else if (c == '"') {
                if (i != value.length() - 1) {
                    throw new FilterException("invalid filter '" + text + "': text after the closing quote");
                }
                return out.toString();
            } else {
                out.append(c);
            }
        }
        throw new FilterException("invalid filter '" + text + "': unterminated quote");
    }

    private static List<String> splitList(String body) throws FilterException {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        boolean wasQuoted = false;
        for (int i = 0; i < body.length(); i++) {
            char c = body.charAt(i);
            if (quoted) {
                if (c == '\\' && i + 1 < body.length()) {
                    cur.append(body.charAt(++i));
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cur.append(c);
                }
            } else if (c == '"' && cur.isEmpty()) {
                quoted = true;
                wasQuoted = true;
            } else if (c == ',') {
                out.add(wasQuoted ? cur.toString() : cur.toString().trim());
                cur.setLength(0);
                wasQuoted = false;
            } else {
                cur.append(c);
            }
        }
        if (quoted) {
            throw new FilterException("invalid filter: unterminated quote in in-list");
        }
        out.add(wasQuoted ? cur.toString() : cur.toString().trim());
        return out;
    }

    /**
     * Checks that the condition applies to a column of {@code columnType} (a
     * {@code pg_type.typname}) and that every value reads as that type. Values the database casts
     * at join are {@link #castValues()}; this check is the worker's own reading of them.
     *
     * @throws FilterException naming the value or operator that does not
     */
    public void checkValues(String columnType) throws FilterException {
        switch (op.kind()) {
            case TRUTH_TEST -> {
                if (!values.get(0).equals("null") && !PgValues.isBool(columnType)) {
                    throw new FilterException("invalid value for filter " + column + ": is." + values.get(0)
                            + " needs a boolean column, not " + columnType);
                }
            }
            case PATTERN -> {
                if (!STRING_TYPES.contains(columnType)) {
                    throw new FilterException("invalid operator for filter " + column + ": " + op.wire()
                            + " needs a text column, not " + columnType);
                }
                TextPattern.compile(op, values.get(0));
            }
            case COMPARISON, DISTINCT_FROM -> {
                for (String v : castValues()) {
                    if (PgValues.comparable(columnType, v) == null) {
                        throw new FilterException(
                                "invalid value for filter " + column + ": '" + v + "' is not a valid " + columnType);
                    }
                }
            }
        }
    }

    /**
     * The values that must cast to the column's type: none for {@code is} and the pattern
     * operators, none for {@code isdistinct.null} (SQL NULL).
     */
    public List<String> castValues() {
        return switch (op.kind()) {
            case TRUTH_TEST, PATTERN -> List.of();
            case DISTINCT_FROM -> isNullKeyword() ? List.of() : values;
            case COMPARISON -> values;
        };
    }

    private boolean isNullKeyword() {
        return values.get(0).equals("null");
    }

    /** The compiled pattern of a pattern operator. @throws FilterException when it is invalid */
    public TextPattern pattern() throws FilterException {
        if (!op.isPattern()) {
            throw new IllegalStateException(op + " has no pattern");
        }
        return TextPattern.compile(op, values.get(0));
    }

    /** Applies the condition to a record, compiling a pattern each time: see {@link Filters}. */
    public boolean matches(JsonNode record, String columnType) {
        try {
            return matches(record, columnType, op.isPattern() ? pattern() : null);
        } catch (FilterException e) {
            return false;
        }
    }

    /**
     * Applies the condition to a record.
     *
     * @param record the row as a JSON object ({@code record} or {@code old_record} of an event)
     * @param columnType the filter column's typname, or null when unknown (compares as text)
     * @param pattern the compiled pattern of a pattern operator, else null
     * @return false when the column is absent, or when the condition is false or unknown (SQL's
     *     NULL: a NULL column, a value that does not read as the type, a text too long to test)
     */
    public boolean matches(JsonNode record, String columnType, TextPattern pattern) {
        if (record == null || !record.has(column)) {
            return false;
        }
        JsonNode cell = record.get(column);
        boolean isNull = cell == null || cell.isNull();
        String type = columnType == null ? "text" : columnType;
        Boolean result = switch (op.kind()) {
            case TRUTH_TEST ->
                switch (values.get(0)) {
                    case "null", "unknown" -> isNull;
                    default ->
                        !isNull && Boolean.valueOf(values.get(0)).equals(PgValues.comparable("bool", text(cell)));
                };
            case DISTINCT_FROM -> {
                if (isNull || isNullKeyword()) {
                    yield isNull != isNullKeyword();
                }
                Integer cmp = PgValues.compare(type, text(cell), values.get(0));
                yield cmp == null ? null : cmp != 0;
            }
            case PATTERN -> isNull || pattern == null ? null : pattern.test(text(cell));
            case COMPARISON -> isNull ? null : compareAll(type, text(cell));
        };
        return result != null && result != negated;
    }

    private Boolean compareAll(String type, String actualText) {
        Comparable<Object> actual = PgValues.comparable(type, actualText);
        if (actual == null) {
            return null;
        }
        for (String v : values) {
            Comparable<Object> expected = PgValues.comparable(type, v);
            if (expected == null) {
                return null;
            }
            int cmp = actual.compareTo(expected);
            boolean hit = switch (op) {
                case EQ, IN -> cmp == 0;
                case NEQ -> cmp != 0;
                case LT -> cmp < 0;
                case LTE -> cmp <= 0;
                case GT -> cmp > 0;
                case GTE -> cmp >= 0;
                case LIKE, ILIKE, MATCH, IMATCH, IS, ISDISTINCT -> throw new IllegalStateException(op.toString());
            };
            if (hit) {
                return true;
            }
            if (op != FilterOp.IN) {
                return false;
            }
        }
        return false;
    }

    private static String text(JsonNode cell) {
        return cell.isValueNode() ? cell.asText() : cell.toString();
    }

    /** The wire form, {@code col=[not.]op.value} or {@code col=[not.]in.(a,b)}, values quoted as the client does. */
    @Override
    public String toString() {
        String value = switch (op) {
            case IS -> values.get(0);
            case IN ->
                "("
                        + String.join(
                                ",", values.stream().map(Filter::quoteIfNeeded).toList()) + ")";
            case EQ, NEQ, LT, LTE, GT, GTE, LIKE, ILIKE, MATCH, IMATCH, ISDISTINCT -> quoteIfNeeded(values.get(0));
        };
        return column + "=" + (negated ? "not." : "") + op.wire() + "." + value;
    }

    /** realtime-js's quoting: values holding {@code , ( ) " \\} or outer whitespace are double-quoted. */
    public static String quoteIfNeeded(String value) {
        boolean reserved = !value.equals(value.strip())
                || !value.equals(value.trim())
                || value.chars().anyMatch(c -> c == ',' || c == '(' || c == ')' || c == '"' || c == '\\');
        return reserved ? "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"" : value;
    }
}
