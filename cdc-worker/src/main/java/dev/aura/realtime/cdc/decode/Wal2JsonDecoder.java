package dev.aura.realtime.cdc.decode;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import dev.aura.realtime.cdc.event.DecodedColumn;
import dev.aura.realtime.cdc.event.RawRow;
import dev.aura.realtime.cdc.event.RawValue;
import dev.aura.realtime.cdc.event.RowChange;
import dev.aura.realtime.common.lsn.Lsn;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Decodes wal2json format-version 2 rows ({@code 'include-transaction', 'include-timestamp',
 * 'include-type-oids', 'include-pk', 'include-lsn', 'include-xids'}), from the SQL interface and from the
 * replication protocol alike: each row is the same UTF-8 JSON text.
 *
 * <p>Row shapes (wal2json 2.x, {@code pg_decode_*_v2} in wal2json.c): {@code B} and {@code C}
 * carry {@code lsn} (the commit record) and {@code nextlsn} (end of the commit); changes carry
 * {@code schema, table, columns[{name,typeoid,value}], identity[...], pk[{name,typeoid}]}. A row
 * Postgres cut because it was too large (poll source, docs/design.md C6) has the same shape with
 * {@code "aura_cut_bytes"} and {@code "cut": true} in place of its large values; keys may come in
 * any order.
 *
 * <p>Lean by design (docs/design.md C6): Jackson's streaming parser walks the row once; values
 * are not decoded but kept as slices of the row's bytes ({@link RawValue}), so a string value,
 * however large, is skipped over without being copied. Not thread-safe: it numbers the changes
 * of the current transaction (the ordinal of the event id), so one instance serves one reader.
 */
public final class Wal2JsonDecoder {
    private static final JsonFactory JSON = JsonFactory.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .build())
            .build();

    /** How wal2json v2 starts a commit row. */
    private static final byte[] COMMIT_PREFIX = "{\"action\":\"C\"".getBytes(StandardCharsets.US_ASCII);

    private Lsn commitLsn = Lsn.ZERO;
    private String commitTimestamp;
    private long ordinal;
    private long xid;
    private Lsn lastCommitEnd;
    /** Column, table and schema names repeat in every row: one String each, found by their characters. */
    private final String[] names = new String[1024];

    /**
     * @param rowLsn the row's LSN (the peek's {@code lsn} column, or the replication message's start)
     * @param buf the row's UTF-8 JSON is {@code buf[off, off+len)}; the decoded change keeps
     *     references into it, so the caller must not reuse it
     * @throws MalformedWalRowException when the row is not wal2json v2 JSON (never expected; logged with the LSN)
     */
    public WalMessage decode(Lsn rowLsn, byte[] buf, int off, int len) throws MalformedWalRowException {
        if (startsWith(buf, off, len, COMMIT_PREFIX)) {
            // A third of the rows of single-row transactions: nothing in them is needed but the row's LSN.
            lastCommitEnd = rowLsn;
            return new WalMessage.Commit(rowLsn);
        }
        Row row = new Row();
        try (JsonParser p = JSON.createParser(buf, off, len)) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                throw new MalformedWalRowException("row at " + rowLsn + " is not a JSON object");
            }
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken t = p.nextToken();
                switch (field) {
                    case "action" -> row.action = t == JsonToken.VALUE_STRING ? name(p) : "";
                    case "lsn" -> row.lsn = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    case "xid" -> row.xid = t == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : 0;
                    case "nextlsn" -> row.nextLsn = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    case "timestamp" -> row.timestamp = t == JsonToken.VALUE_STRING ? p.getText() : null;
                    case "schema" -> row.schema = t == JsonToken.VALUE_STRING ? name(p) : "";
                    case "table" -> row.table = t == JsonToken.VALUE_STRING ? name(p) : "";
                    case "columns" -> row.columns = columns(p, buf, off);
                    case "identity" -> row.identity = columns(p, buf, off);
                    case "pk" -> row.pk = pk(p);
                    case "aura_cut_bytes" -> row.cut = true;
                    default -> p.skipChildren();
                }
            }
        } catch (IOException | RuntimeException | StackOverflowError e) {
            if (isChange(row.action) && !row.schema.isEmpty()) {
                // A change row whose values we cannot read is its project's fault, not the slot's
                // (docs/design.md C13): it is handed on as undecodable, with its raw row, in order.
                return change(
                        row,
                        buf,
                        off,
                        len,
                        "a value of the row could not be decoded ("
                                + e.getClass().getSimpleName() + ")");
            }
            throw new MalformedWalRowException("row at " + rowLsn + " is not wal2json JSON ("
                    + e.getClass().getSimpleName() + ")");
        }
        return message(rowLsn, row, buf, off, len);
    }

    /**
     * Decodes one change row kept aside (the late lane, a re-publish from the quarantine,
     * docs/design.md C14) as it was decoded in its transaction: with its commit LSN, ordinal and
     * commit time.
     *
     * @throws MalformedWalRowException when the row is not a wal2json change row
     */
    public RowChange decodeChange(RawRow raw, Lsn commit, long changeOrdinal, String commitTime, long changeXid)
            throws MalformedWalRowException {
        commitLsn = commit;
        ordinal = changeOrdinal;
        commitTimestamp = commitTime;
        xid = changeXid;
        if (decode(commit, raw.buf(), raw.off(), raw.len()) instanceof WalMessage.Change c) {
            return c.change();
        }
        throw new MalformedWalRowException("a held row is not a change row");
    }

    /** The fields of one row that matter. */
    private static final class Row {
        String action = "";
        String lsn;
        String nextLsn;
        long xid;
        String timestamp;
        String schema = "";
        String table = "";
        List<DecodedColumn> columns = List.of();
        List<DecodedColumn> identity = List.of();
        List<String> pk = List.of();
        boolean cut;
    }

    private static boolean isChange(String action) {
        return action.length() == 1 && "IUDT".contains(action);
    }

    private WalMessage.Change change(Row row, byte[] buf, int off, int len, String undecodable) {
        return new WalMessage.Change(new RowChange(
                row.action.charAt(0),
                row.schema,
                row.table,
                undecodable == null ? row.columns : List.of(),
                undecodable == null ? row.identity : List.of(),
                undecodable == null ? row.pk : List.of(),
                commitLsn,
                ordinal++,
                commitTimestamp,
                new RawRow(buf, off, len),
                row.cut,
                undecodable,
                xid));
    }

    private WalMessage message(Lsn rowLsn, Row row, byte[] buf, int off, int len) throws MalformedWalRowException {
        switch (row.action) {
            case "B" -> {
                commitLsn = lsn(row.lsn, "lsn", rowLsn);
                // Converted once per transaction: every row of it shares the commit time.
                commitTimestamp = CommitTimes.iso(row.timestamp);
                ordinal = 0;
                xid = row.xid;
                return new WalMessage.Begin(commitLsn, lsn(row.nextLsn, "nextlsn", rowLsn), commitTimestamp);
            }
            case "C" -> {
                lastCommitEnd = rowLsn;
                return new WalMessage.Commit(rowLsn);
            }
            case "I", "U", "D", "T" -> {
                return change(row, buf, off, len, null);
            }
            default -> {
                return new WalMessage.Other(row.action);
            }
        }
    }

    private static boolean startsWith(byte[] buf, int off, int len, byte[] prefix) {
        if (len < prefix.length) {
            return false;
        }
        for (int i = 0; i < prefix.length; i++) {
            if (buf[off + i] != prefix[i]) {
                return false;
            }
        }
        return true;
    }

    /** The end LSN of the last commit row decoded since {@link #resetBatch()}, or null. */
    public Lsn lastCommitEnd() {
        return lastCommitEnd;
    }

    /** Forgets the last commit of the previous batch. */
    public void resetBatch() {
        lastCommitEnd = null;
    }

    /**
     * The current string token, as the String seen last time for the same characters when there
     * is one (a fixed-size table: a bound, and a collision only costs a new String).
     */
    private String name(JsonParser p) throws IOException {
        char[] chars = p.getTextCharacters();
        int off = p.getTextOffset();
        int len = p.getTextLength();
        int h = len;
        for (int i = off; i < off + len; i++) {
            h = 31 * h + chars[i];
        }
        int slot = (h ^ (h >>> 16)) & (names.length - 1);
        String known = names[slot];
        if (known != null && known.length() == len) {
            boolean same = true;
            for (int i = 0; i < len && same; i++) {
                same = known.charAt(i) == chars[off + i];
            }
            if (same) {
                return known;
            }
        }
        String s = new String(chars, off, len);
        names[slot] = s;
        return s;
    }

    /** {@code [{"name", "typeoid", "value"}, ...]}; anything else is no columns. */
    private List<DecodedColumn> columns(JsonParser p, byte[] buf, int base) throws IOException {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            p.skipChildren();
            return List.of();
        }
        List<DecodedColumn> out = new ArrayList<>();
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                continue;
            }
            out.add(column(p, buf, base));
        }
        return out;
    }

    /**
     * One column object. A string value is not read: its token is skipped, and its slice runs
     * from its opening quote to the closing quote found just before the next token.
     */
    private DecodedColumn column(JsonParser p, byte[] buf, int base) throws IOException {
        String name = "";
        long oid = 0;
        RawValue value = RawValue.NULL;
        boolean cut = false;
        int stringStart = -1;
        JsonToken t = p.nextToken();
        while (t == JsonToken.FIELD_NAME) {
            String field = p.currentName();
            JsonToken v = p.nextToken();
            switch (field) {
                case "name" -> name = v == JsonToken.VALUE_STRING ? name(p) : "";
                case "typeoid" -> oid = v == JsonToken.VALUE_NUMBER_INT ? p.getLongValue() : 0;
                case "value" -> {
                    if (v == JsonToken.VALUE_STRING) {
                        stringStart = base + (int) p.currentTokenLocation().getByteOffset();
                    } else {
                        value = literal(p, v, buf, base);
                    }
                }
                case "cut" -> cut = v == JsonToken.VALUE_TRUE;
                default -> p.skipChildren();
            }
            t = p.nextToken();
            if (stringStart >= 0) {
                int next = base + (int) p.currentTokenLocation().getByteOffset();
                value = stringSlice(buf, stringStart, next);
                stringStart = -1;
            }
        }
        if (t != JsonToken.END_OBJECT) {
            throw new IOException("column is not an object");
        }
        return new DecodedColumn(name, oid, cut ? RawValue.CUT : value);
    }

    /** The string whose opening quote is at {@code start}, given where the token after it starts. */
    private static RawValue stringSlice(byte[] buf, int start, int nextToken) throws IOException {
        int end = nextToken - 1;
        while (end > start
                && (buf[end] == ' ' || buf[end] == ',' || buf[end] == '\n' || buf[end] == '\t' || buf[end] == '\r')) {
            end--;
        }
        if (buf[start] != '"' || buf[end] != '"' || end <= start) {
            throw new IOException("cannot delimit a string value");
        }
        return RawValue.string(buf, start + 1, end - start - 1);
    }

    private static RawValue literal(JsonParser p, JsonToken v, byte[] buf, int base) throws IOException {
        switch (v) {
            case VALUE_NULL -> {
                return RawValue.NULL;
            }
            case VALUE_TRUE -> {
                return RawValue.TRUE;
            }
            case VALUE_FALSE -> {
                return RawValue.FALSE;
            }
            case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
                if (p.isNaN()) {
                    // NaN / Infinity literals are not JSON: carried as text, as Jackson writes them
                    byte[] text = ("\"" + p.getText() + "\"").getBytes(StandardCharsets.US_ASCII);
                    return RawValue.string(text, 1, text.length - 2);
                }
                int start = base + (int) p.currentTokenLocation().getByteOffset();
                return RawValue.literal(RawValue.Kind.NUMBER, buf, start, p.getTextLength());
            }
            default -> {
                int start = base + (int) p.currentTokenLocation().getByteOffset();
                p.skipChildren();
                int end = base + (int) p.currentLocation().getByteOffset();
                return RawValue.literal(RawValue.Kind.JSON, buf, start, end - start);
            }
        }
    }

    private List<String> pk(JsonParser p) throws IOException {
        if (p.currentToken() != JsonToken.START_ARRAY) {
            p.skipChildren();
            return List.of();
        }
        List<String> out = new ArrayList<>(2);
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t != JsonToken.START_OBJECT) {
                p.skipChildren();
                continue;
            }
            String name = "";
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                if ("name".equals(field) && v == JsonToken.VALUE_STRING) {
                    name = name(p);
                } else {
                    p.skipChildren();
                }
            }
            out.add(name);
        }
        return out;
    }

    private static Lsn lsn(String text, String field, Lsn rowLsn) throws MalformedWalRowException {
        if (text == null) {
            throw new MalformedWalRowException("row at " + rowLsn + " lacks '" + field + "' (is include-lsn set?)");
        }
        try {
            return Lsn.parse(text);
        } catch (IllegalArgumentException e) {
            throw new MalformedWalRowException("row at " + rowLsn + ": " + e.getMessage());
        }
    }
}
