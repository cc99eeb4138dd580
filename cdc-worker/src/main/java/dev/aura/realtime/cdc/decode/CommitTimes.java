package dev.aura.realtime.cdc.decode;

import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;

/** A transaction's commit time as Supabase sends it: ISO 8601 UTC with {@code Z}. Stateless. */
final class CommitTimes {
    private CommitTimes() {}

    private static final DateTimeFormatter PG_TS = new DateTimeFormatterBuilder()
            .appendPattern("yyyy-MM-dd HH:mm:ss")
            .optionalStart()
            .appendFraction(ChronoField.NANO_OF_SECOND, 0, 9, true)
            .optionalEnd()
            .optionalStart()
            .appendOffset("+HH:mm", "+00")
            .optionalEnd()
            .optionalStart()
            .appendOffset("+HH", "+00")
            .optionalEnd()
            .toFormatter();

    /** {@code 2026-01-02 03:04:05.123456+00} (session TimeZone UTC) → {@code 2026-01-02T03:04:05.123456Z}. */
    static String iso(String pgText) {
        if (pgText == null) {
            return null;
        }
        // Fast path: the session is pinned to TimeZone=UTC, so Postgres prints "+00".
        if (pgText.length() > 19 && pgText.endsWith("+00") && pgText.charAt(10) == ' ') {
            return pgText.substring(0, 10) + 'T' + pgText.substring(11, pgText.length() - 3) + 'Z';
        }
        try {
            var parsed = PG_TS.parseBest(pgText, OffsetDateTime::from, LocalDateTime::from);
            var instant = parsed instanceof OffsetDateTime odt
                    ? odt.toInstant()
                    : ((LocalDateTime) parsed).toInstant(ZoneOffset.UTC);
            return DateTimeFormatter.ISO_INSTANT.format(instant);
        } catch (DateTimeParseException e) {
            return pgText;
        }
    }
}
