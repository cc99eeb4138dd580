package dev.aura.realtime.cdc.decode;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.common.lsn.Lsn;
import dev.aura.realtime.common.wire.WireJson;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.DateTimeParseException;
import java.time.temporal.ChronoField;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes rows of {@code pg_logical_slot_peek_changes(..., 'format-version', '2',
 * 'include-transaction', '1', 'include-timestamp', '1', 'include-type-oids', '1',
 * 'include-types', '0', 'include-pk', '1', 'include-lsn', '1')}.
 *
 * <p>Row shapes (wal2json 2.x, {@code pg_decode_*_v2} in wal2json.c): {@code B} and {@code C}
 * carry {@code lsn} (the commit record) and {@code nextlsn} (end of the commit); changes carry
 * {@code schema, table, columns[{name,typeoid,value}], identity[...], pk[{name,typeoid}]}.
 *
 * <p>Not thread-safe: it numbers the changes of the current transaction (the ordinal of the
 * event id), so one instance serves one poll loop.
 */
public final class Wal2JsonDecoder {
    private final ObjectMapper mapper = WireJson.mapper();
    private Lsn commitLsn = Lsn.ZERO;
    private String commitTimestamp;
    private long ordinal;
    private Lsn lastCommitEnd;

    /**
     * @param rowLsn the {@code lsn} column of the peek row
     * @param data the {@code data} column
     * @throws MalformedWalRowException when the row is not wal2json v2 JSON (never expected; logged with the LSN)
     */
    public WalMessage decode(Lsn rowLsn, String data) throws MalformedWalRowException {
        JsonNode row;
        try {
            row = mapper.readTree(data);
        } catch (JsonProcessingException e) {
            throw new MalformedWalRowException("row at " + rowLsn + " is not JSON: " + e.getOriginalMessage());
        }
        String action = row.path("action").asText("");
        switch (action) {
            case "B" -> {
                commitLsn = lsnField(row, "lsn", rowLsn);
                // Converted once per transaction: every row of it shares the commit time.
                commitTimestamp = isoCommitTimestamp(row.path("timestamp").asText(null));
                ordinal = 0;
                return new WalMessage.Begin(commitLsn, lsnField(row, "nextlsn", rowLsn), commitTimestamp);
            }
            case "C" -> {
                lastCommitEnd = rowLsn;
                return new WalMessage.Commit(rowLsn);
            }
            case "I", "U", "D", "T" -> {
                RowChange change = new RowChange(
                        action.charAt(0),
                        row.path("schema").asText(),
                        row.path("table").asText(),
                        columns(row.get("columns")),
                        columns(row.get("identity")),
                        names(row.get("pk")),
                        commitLsn,
                        ordinal++,
                        commitTimestamp);
                return new WalMessage.Change(change);
            }
            default -> {
                return new WalMessage.Other(action);
            }
        }
    }

    /** The end LSN of the last commit row decoded since {@link #resetBatch()}, or null. */
    public Lsn lastCommitEnd() {
        return lastCommitEnd;
    }

    /** Forgets the last commit of the previous batch. */
    public void resetBatch() {
        lastCommitEnd = null;
    }

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
    static String isoCommitTimestamp(String pgText) {
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

    private static Lsn lsnField(JsonNode row, String field, Lsn rowLsn) throws MalformedWalRowException {
        JsonNode node = row.get(field);
        if (node == null || !node.isTextual()) {
            throw new MalformedWalRowException("row at " + rowLsn + " lacks '" + field + "' (is include-lsn set?)");
        }
        try {
            return Lsn.parse(node.asText());
        } catch (IllegalArgumentException e) {
            throw new MalformedWalRowException("row at " + rowLsn + ": " + e.getMessage());
        }
    }

    private static List<DecodedColumn> columns(JsonNode array) {
        if (array == null || !array.isArray() || array.isEmpty()) {
            return List.of();
        }
        List<DecodedColumn> out = new ArrayList<>(array.size());
        for (JsonNode c : array) {
            out.add(new DecodedColumn(c.path("name").asText(), c.path("typeoid").asLong(0), c.get("value")));
        }
        return out;
    }

    private static List<String> names(JsonNode array) {
        if (array == null || !array.isArray() || array.isEmpty()) {
            return List.of();
        }
        List<String> out = new ArrayList<>(array.size());
        for (JsonNode c : array) {
            out.add(c.path("name").asText());
        }
        return out;
    }
}
