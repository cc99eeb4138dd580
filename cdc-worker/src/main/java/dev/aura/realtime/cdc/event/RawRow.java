package dev.aura.realtime.cdc.event;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The wal2json row a change was decoded from: a slice of the reader's buffer, which nobody writes
 * after decoding (the change's {@link RawValue}s point into the same bytes). What the late lane and
 * the quarantine keep of a change (docs/design.md C13, C14).
 */
public record RawRow(byte[] buf, int off, int len) {
    public static final RawRow EMPTY = new RawRow(new byte[0], 0, 0);

    /** A row that is the whole array. */
    public static RawRow of(byte[] bytes) {
        return new RawRow(bytes, 0, bytes.length);
    }

    /** A copy of the row's bytes. */
    public byte[] bytes() {
        return off == 0 && len == buf.length ? buf : Arrays.copyOfRange(buf, off, off + len);
    }

    /** The row's UTF-8 text. */
    public String text() {
        return new String(buf, off, len, StandardCharsets.UTF_8);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RawRow r && Arrays.equals(buf, off, off + len, r.buf, r.off, r.off + r.len);
    }

    @Override
    public int hashCode() {
        int h = 1;
        for (int i = off; i < off + len; i++) {
            h = 31 * h + buf[i];
        }
        return h;
    }

    @Override
    public String toString() {
        return "RawRow(" + len + " bytes)";
    }
}
