package dev.aura.realtime.common.lsn;

import java.util.Locale;

/**
 * A Postgres log sequence number: a 64-bit byte position in the WAL, written {@code X/Y} with
 * both halves in hexadecimal (the {@code pg_lsn} text form, e.g. {@code 16/B374D848}).
 *
 * <p>Ordering is unsigned, as in Postgres. {@link #ZERO} is {@code 0/0}, the "invalid" LSN.
 */
public record Lsn(long value) implements Comparable<Lsn> {
    public static final Lsn ZERO = new Lsn(0);

    /**
     * Parses the {@code pg_lsn} text form.
     *
     * @throws IllegalArgumentException when the text is not {@code hex/hex} with halves of at most 8 digits
     */
    public static Lsn parse(String text) {
        if (text == null) {
            throw new IllegalArgumentException("LSN is null");
        }
        int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1 || slash > 8 || text.length() - slash - 1 > 8) {
            throw new IllegalArgumentException("not an LSN (expected X/Y in hex): " + text);
        }
        for (int i = 0; i < text.length(); i++) {
            // Long.parseLong alone would also take a sign: "0/-1" must not become FFFFFFFF/FFFFFFFF.
            if (i != slash && Character.digit(text.charAt(i), 16) < 0) {
                throw new IllegalArgumentException("not an LSN (expected X/Y in hex): " + text);
            }
        }
        long hi = Long.parseLong(text.substring(0, slash), 16);
        long lo = Long.parseLong(text.substring(slash + 1), 16);
        return new Lsn((hi << 32) | lo);
    }

    /** Bytes of WAL from {@code older} to this LSN; negative when {@code older} is ahead. */
    public long bytesAfter(Lsn older) {
        return value - older.value;
    }

    public boolean isAfter(Lsn other) {
        return compareTo(other) > 0;
    }

    @Override
    public int compareTo(Lsn other) {
        return Long.compareUnsigned(value, other.value);
    }

    /** The {@code pg_lsn} text form, upper-case hex like Postgres prints it. */
    @Override
    public String toString() {
        return Long.toHexString(value >>> 32).toUpperCase(Locale.ROOT) + "/"
                + Long.toHexString(value & 0xFFFFFFFFL).toUpperCase(Locale.ROOT);
    }
}
