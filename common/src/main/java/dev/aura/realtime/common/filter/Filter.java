package dev.aura.realtime.common.filter;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A parsed postgres_changes filter in Supabase's classic syntax: {@code column=op.value} with op
 * one of {@code eq, neq, lt, lte, gt, gte} or {@code column=in.(v1,v2,...)} (at most 100 values,
 * optionally double-quoted). Rules follow Supabase Realtime (PROTOCOL-NOTES.md "Filters"): a NULL
 * column never matches; values compare with the semantics of the column's Postgres type
 * (numbers numerically and exactly, booleans, timestamps as instants, uuids case-insensitively,
 * text by code point, i.e. the {@code C} collation).
 *
 * <p>Immutable and thread-safe. {@link #parse} rejects malformed text; {@link #checkValues}
 * rejects values that cannot be read as the column's type, so bad filters fail at join time.
 */
public record Filter(String column, FilterOp op, List<String> values) {
    /** The maximum number of values of an {@code in} filter (Supabase's limit). */
    public static final int MAX_IN_VALUES = 100;

    private static final Set<String> NUMERIC =
            Set.of("int2", "int4", "int8", "float4", "float8", "numeric", "oid", "money");
    private static final Set<String> BOOL = Set.of("bool");
    private static final Set<String> TIMESTAMPTZ = Set.of("timestamptz");
    private static final Set<String> TIMESTAMP = Set.of("timestamp");
    private static final Set<String> DATE = Set.of("date");

    public Filter {
        values = List.copyOf(values);
    }

    /**
     * @throws FilterException when the text is not {@code col=op.value} with a known operator
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
        int dot = rest.indexOf('.');
        if (dot <= 0) {
            throw new FilterException("invalid filter '" + text + "': expected column=op.value");
        }
        FilterOp op = FilterOp.fromWire(rest.substring(0, dot));
        if (op == null) {
            throw new FilterException("invalid filter '" + text + "': unknown operator " + rest.substring(0, dot));
        }
        String value = rest.substring(dot + 1);
        if (op != FilterOp.IN) {
            return new Filter(column, op, List.of(value));
        }
        if (value.length() < 2 || value.charAt(0) != '(' || value.charAt(value.length() - 1) != ')') {
            throw new FilterException("invalid filter '" + text + "': in expects (v1,v2,...)");
        }
        List<String> items = splitList(value.substring(1, value.length() - 1));
        if (items.isEmpty() || items.size() > MAX_IN_VALUES) {
            throw new FilterException("invalid filter '" + text + "': in takes 1 to " + MAX_IN_VALUES + " values");
        }
        return new Filter(column, op, items);
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
     * Checks that every value reads as {@code columnType} (a {@code pg_type.typname}).
     *
     * @throws FilterException naming the value that does not
     */
    public void checkValues(String columnType) throws FilterException {
        for (String v : values) {
            if (comparable(columnType, v) == null) {
                throw new FilterException(
                        "invalid value for filter " + column + ": '" + v + "' is not a valid " + columnType);
            }
        }
    }

    /**
     * Applies the filter to a record.
     *
     * @param record the row as a JSON object ({@code record} or {@code old_record} of an event)
     * @param columnType the filter column's typname, or null when unknown (compares as text)
     * @return false when the column is absent or NULL, or when the comparison fails
     */
    public boolean matches(JsonNode record, String columnType) {
        if (record == null || !record.has(column)) {
            return false;
        }
        JsonNode cell = record.get(column);
        if (cell == null || cell.isNull()) {
            return false;
        }
        String type = columnType == null ? "text" : columnType;
        Comparable<Object> actual = comparable(type, cell.isValueNode() ? cell.asText() : cell.toString());
        if (actual == null) {
            return false;
        }
        for (String v : values) {
            Comparable<Object> expected = comparable(type, v);
            if (expected == null) {
                continue;
            }
            int cmp = actual.compareTo(expected);
            boolean hit = switch (op) {
                case EQ, IN -> cmp == 0;
                case NEQ -> cmp != 0;
                case LT -> cmp < 0;
                case LTE -> cmp <= 0;
                case GT -> cmp > 0;
                case GTE -> cmp >= 0;
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

    /** The wire form, {@code col=op.value} or {@code col=in.(a,b)}. */
    @Override
    public String toString() {
        return op == FilterOp.IN
                ? column + "=in.(" + String.join(",", values) + ")"
                : column + "=" + op.wire() + "." + values.get(0);
    }

    private static final DateTimeFormatter PG_TIMESTAMP = new DateTimeFormatterBuilder()
            .appendPattern("yyyy-MM-dd")
            .optionalStart()
            .appendLiteral('T')
            .optionalEnd()
            .optionalStart()
            .appendLiteral(' ')
            .optionalEnd()
            .appendPattern("HH:mm")
            .optionalStart()
            .appendPattern(":ss")
            .optionalEnd()
            .optionalStart()
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .optionalEnd()
            .optionalStart()
            .appendOffset("+HH:mm", "Z")
            .optionalEnd()
            .optionalStart()
            .appendOffset("+HH", "Z")
            .optionalEnd()
            .toFormatter(Locale.ROOT);

    /** A comparable view of a value under a Postgres type, or null when it does not read as that type. */
    @SuppressWarnings("unchecked")
    static Comparable<Object> comparable(String type, String text) {
        try {
            Comparable<?> c;
            if (NUMERIC.contains(type)) {
                c = numeric(text.trim());
            } else if (BOOL.contains(type)) {
                c = bool(text.trim());
            } else if (TIMESTAMPTZ.contains(type)) {
                c = instant(text.trim());
            } else if (TIMESTAMP.contains(type)) {
                c = LocalDateTime.parse(text.trim(), PG_TIMESTAMP);
            } else if (DATE.contains(type)) {
                c = LocalDate.parse(text.trim());
            } else if (type.equals("uuid")) {
                c = java.util.UUID.fromString(text.trim()).toString();
            } else {
                c = text;
            }
            return (Comparable<Object>) c;
        } catch (DateTimeParseException | IllegalArgumentException e) {
            return null;
        }
    }

    private static Comparable<?> numeric(String text) {
        // Postgres orders NaN above every other value and equal to itself (float8 btree semantics).
        return switch (text) {
            case "NaN" -> new PgNumber(BigDecimal.ZERO, 2);
            case "Infinity", "inf", "+Infinity" -> new PgNumber(BigDecimal.ZERO, 1);
            case "-Infinity", "-inf" -> new PgNumber(BigDecimal.ZERO, -1);
            default -> new PgNumber(new BigDecimal(text.replace("$", "").replace(",", "")), 0);
        };
    }

    private static Boolean bool(String text) {
        return switch (text.toLowerCase(Locale.ROOT)) {
            case "t", "true", "yes", "y", "on", "1" -> Boolean.TRUE;
            case "f", "false", "no", "n", "off", "0" -> Boolean.FALSE;
            default -> throw new IllegalArgumentException("not a boolean: " + text);
        };
    }

    private static Instant instant(String text) {
        var parsed = PG_TIMESTAMP.parseBest(text, OffsetDateTime::from, LocalDateTime::from);
        if (parsed instanceof OffsetDateTime odt) {
            return odt.toInstant();
        }
        // A timestamptz literal without offset is read in the session time zone, which the
        // cdc-worker pins to UTC.
        return ((LocalDateTime) parsed).toInstant(java.time.ZoneOffset.UTC);
    }

    /** A number with Postgres float ordering: -Infinity < finite < Infinity < NaN. */
    private record PgNumber(BigDecimal finite, int special) implements Comparable<PgNumber> {
        @Override
        public int compareTo(PgNumber o) {
            if (special != 0 || o.special != 0) {
                return Integer.compare(rank(), o.rank());
            }
            return finite.compareTo(o.finite);
        }

        private int rank() {
            return special == -1 ? -1 : special == 0 ? 0 : special == 1 ? 1 : 2;
        }
    }
}
