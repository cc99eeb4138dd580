package dev.aura.realtime.cdc.event;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.WireJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * One value of a wal2json change as it appeared in the row's UTF-8 JSON text, not decoded: a
 * slice of the row's bytes (docs/design.md C6). Text values stay JSON-escaped UTF-8, so the common
 * types (text, uuid, dates, enums...) are copied into the event JSON byte for byte and a huge
 * value is never turned into a {@link String}. Immutable; it shares the row's byte array, which
 * nobody writes after decoding.
 */
public final class RawValue {
    /** What the slice holds. */
    public enum Kind {
        /** JSON {@code null}. */
        NULL,
        /** A JSON string: the slice is its content between the quotes, still escaped. */
        STRING,
        /** A JSON number literal. */
        NUMBER,
        TRUE,
        FALSE,
        /** A JSON object or array (wal2json never writes one; kept for hand-made values). */
        JSON,
        /** Cut by Postgres because the whole row was too large (docs/design.md C6, poll source). */
        CUT
    }

    public static final RawValue NULL = new RawValue(Kind.NULL, new byte[0], 0, 0);
    public static final RawValue TRUE = new RawValue(Kind.TRUE, new byte[0], 0, 0);
    public static final RawValue FALSE = new RawValue(Kind.FALSE, new byte[0], 0, 0);
    public static final RawValue CUT = new RawValue(Kind.CUT, new byte[0], 0, 0);

    /** Values of any size and precision: Postgres numerics have up to 131,072 digits. */
    static final JsonFactory JSON = JsonFactory.builder()
            .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
            .streamReadConstraints(StreamReadConstraints.builder()
                    .maxStringLength(Integer.MAX_VALUE)
                    .maxNumberLength(Integer.MAX_VALUE)
                    .build())
            .build();

    private static final ObjectMapper MAPPER = WireJson.valueMapper();

    private final Kind kind;
    private final byte[] buf;
    private final int off;
    private final int len;

    private RawValue(Kind kind, byte[] buf, int off, int len) {
        this.kind = kind;
        this.buf = buf;
        this.off = off;
        this.len = len;
    }

    /** A JSON string whose escaped content is {@code buf[off, off+len)}, with quotes at {@code off-1} and {@code off+len}. */
    public static RawValue string(byte[] buf, int off, int len) {
        return new RawValue(Kind.STRING, buf, off, len);
    }

    /** A JSON number or structure literal {@code buf[off, off+len)}. */
    public static RawValue literal(Kind kind, byte[] buf, int off, int len) {
        return new RawValue(kind, buf, off, len);
    }

    public Kind kind() {
        return kind;
    }

    /** Bytes of the slice (for strings: the escaped content, without quotes). */
    public int byteLength() {
        return len;
    }

    /** True for a string containing no escape: its slice is its UTF-8 text. */
    public boolean plainString() {
        if (kind != Kind.STRING) {
            return false;
        }
        for (int i = off; i < off + len; i++) {
            if (buf[i] == '\\') {
                return false;
            }
        }
        return true;
    }

    /** The decoded text: a string's content, a literal's text, or null for NULL and CUT. */
    public String text() {
        switch (kind) {
            case NULL, CUT -> {
                return null;
            }
            case TRUE -> {
                return "true";
            }
            case FALSE -> {
                return "false";
            }
            case STRING -> {
                if (plainString()) {
                    return new String(buf, off, len, StandardCharsets.UTF_8);
                }
                try (JsonParser p = JSON.createParser(buf, off - 1, len + 2)) {
                    p.nextToken();
                    return p.getText();
                } catch (IOException e) {
                    throw new UncheckedIOException("string value is not valid JSON", e);
                }
            }
            default -> {
                return new String(buf, off, len, StandardCharsets.UTF_8);
            }
        }
    }

    /** Writes the value as it is (no type mapping): strings are copied escaped, byte for byte. */
    public void writeTo(JsonGenerator g) throws IOException {
        switch (kind) {
            case NULL, CUT -> g.writeNull();
            case TRUE -> g.writeBoolean(true);
            case FALSE -> g.writeBoolean(false);
            case STRING -> g.writeRawUTF8String(buf, off, len);
            case NUMBER -> g.writeNumber(new String(buf, off, len, StandardCharsets.ISO_8859_1));
            case JSON -> {
                try (JsonParser p = JSON.createParser(buf, off, len)) {
                    p.nextToken();
                    g.copyCurrentStructureExact(p);
                }
            }
        }
    }

    /** The JSON tree of the value as it is (no type mapping). */
    public JsonNode toTree() {
        try {
            return switch (kind) {
                case NULL, CUT -> MAPPER.nullNode();
                case TRUE -> MAPPER.getNodeFactory().booleanNode(true);
                case FALSE -> MAPPER.getNodeFactory().booleanNode(false);
                case STRING -> MAPPER.getNodeFactory().textNode(text());
                default -> MAPPER.readTree(buf, off, len);
            };
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** True when the slice starts with these bytes. */
    public boolean startsWith(byte[] prefix) {
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

    @Override
    public String toString() {
        return kind + (kind == Kind.STRING || kind == Kind.NUMBER || kind == Kind.JSON ? "(" + text() + ")" : "");
    }
}
