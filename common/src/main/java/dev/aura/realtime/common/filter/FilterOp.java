package dev.aura.realtime.common.filter;

import java.util.Locale;

/**
 * The operators of postgres_changes filters, as realtime-js's {@code RealtimePostgresFilterBuilder}
 * writes them ({@code col=op.value}, {@code col=not.op.value}); docs/protocol.md "Filters".
 */
public enum FilterOp {
    EQ,
    NEQ,
    LT,
    LTE,
    GT,
    GTE,
    IN,
    LIKE,
    ILIKE,
    MATCH,
    IMATCH,
    IS,
    ISDISTINCT;

    /** @return the operator for its wire name ({@code eq}, {@code in}, ...), or null */
    public static FilterOp fromWire(String text) {
        for (FilterOp op : values()) {
            if (op.wire().equals(text)) {
                return op;
            }
        }
        return null;
    }

    public String wire() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** {@code like}, {@code ilike}, {@code match}, {@code imatch}: a pattern tested against text. */
    public boolean isPattern() {
        return this == LIKE || this == ILIKE || this == MATCH || this == IMATCH;
    }

    /** An ordering or equality comparison in the column's type ({@code eq ... gte}, {@code in}). */
    public boolean isComparison() {
        return ordinal() <= IN.ordinal();
    }
}
