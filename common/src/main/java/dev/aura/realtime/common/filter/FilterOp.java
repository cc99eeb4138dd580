package dev.aura.realtime.common.filter;

import java.util.Locale;

/** The filter operators of Supabase Realtime's classic filter syntax ({@code col=op.value}). */
public enum FilterOp {
    EQ,
    NEQ,
    LT,
    LTE,
    GT,
    GTE,
    IN;

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
}
