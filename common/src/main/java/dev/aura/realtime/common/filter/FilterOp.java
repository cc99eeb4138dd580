package dev.aura.realtime.common.filter;

import java.util.Locale;

/**
 * The operators of postgres_changes filters, as realtime-js's {@code RealtimePostgresFilterBuilder}
 * writes them ({@code col=op.value}, {@code col=not.op.value}); docs/protocol.md "Filters".
 *
 * <p>Each operator carries its {@link Kind}; the order of the constants means nothing. Code that
 * depends on the kind or the operator switches over it exhaustively (no {@code default}), so the
 * compiler names every place a new operator must be handled.
 */
public enum FilterOp {
    EQ(Kind.COMPARISON),
    NEQ(Kind.COMPARISON),
    LT(Kind.COMPARISON),
    LTE(Kind.COMPARISON),
    GT(Kind.COMPARISON),
    GTE(Kind.COMPARISON),
    IN(Kind.COMPARISON),
    LIKE(Kind.PATTERN),
    ILIKE(Kind.PATTERN),
    MATCH(Kind.PATTERN),
    IMATCH(Kind.PATTERN),
    IS(Kind.TRUTH_TEST),
    ISDISTINCT(Kind.DISTINCT_FROM);

    /** What an operator tests, which decides how its values are checked, cast and evaluated. */
    public enum Kind {
        /**
         * Equality or ordering in the column's type ({@code eq neq lt lte gt gte}, and {@code in}
         * for any of a list); its values are cast to the column's type, and a NULL column is unknown.
         */
        COMPARISON,
        /**
         * {@code like ilike match imatch}: a {@link TextPattern} tested against a text column; a NULL
         * column is unknown.
         */
        PATTERN,
        /** {@code is}: SQL's {@code IS NULL/TRUE/FALSE/UNKNOWN}, a keyword rather than a value. */
        TRUTH_TEST,
        /**
         * {@code isdistinct}: SQL's {@code IS DISTINCT FROM}, a comparison in which NULL is a value;
         * its value is cast unless it is the keyword {@code null}.
         */
        DISTINCT_FROM
    }

    private final Kind kind;

    FilterOp(Kind kind) {
        this.kind = kind;
    }

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

    public Kind kind() {
        return kind;
    }

    /** {@code like}, {@code ilike}, {@code match}, {@code imatch}: a pattern tested against text. */
    public boolean isPattern() {
        return kind == Kind.PATTERN;
    }
}
