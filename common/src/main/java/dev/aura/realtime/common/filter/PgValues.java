package dev.aura.realtime.common.filter;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.Locale;
import java.util.Set;

/**
 * Filter values and row cells read as Postgres reads them under a column's type ({@code
 * pg_type.typname}), for {@link Filter}'s comparisons: numbers numerically and exactly (NaN and the
 * infinities in float order), booleans, timestamps as instants, uuids case-insensitively, anything
 * else as text by code point (docs/protocol.md "Filters").
 */
final class PgValues {
    private static final Set<String> NUMERIC =
            Set.of("int2", "int4", "int8", "float4", "float8", "numeric", "oid", "money");
    private static final Set<String> BOOL = Set.of("bool");
    private static final Set<String> TIMESTAMPTZ = Set.of("timestamptz");
    private static final Set<String> TIMESTAMP = Set.of("timestamp");
    private static final Set<String> DATE = Set.of("date");

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

    private PgValues() {}

    static boolean isBool(String type) {
        return BOOL.contains(type);
    }

    /** @return the order of two values under a type, or null when either does not read as it */
    static Integer compare(String type, String a, String b) {
        Comparable<Object> x = comparable(type, a);
        Comparable<Object> y = comparable(type, b);
        return x == null || y == null ? null : x.compareTo(y);
    }

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
