package dev.aura.realtime.common.filter;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;

/**
 * The key an {@code eq} value is indexed under (docs/design.md C8): a function of the text alone,
 * such that two texts equal under {@link Filter}'s comparison for any of the {@link #INDEXED}
 * types get the same key. Different values may share a key (text {@code "Yes"} and {@code "1"}
 * do): the index only narrows the candidates, the filter itself decides. Columns of other types
 * are looked up by scanning their eq bindings.
 */
public final class EqKey {
    /** The column types whose eq bindings are found by key. */
    public static final Set<String> INDEXED = Set.of(
            "int2", "int4", "int8", "float4", "float8", "numeric", "oid", "bool", "uuid", "text", "varchar", "name");

    private static final int MAX_NUMBER_CHARS = 64;

    private EqKey() {}

    public static String of(String text) {
        String s = text.trim().toLowerCase(Locale.ROOT);
        switch (s) {
            case "t", "true", "yes", "y", "on" -> s = "1";
            case "f", "false", "no", "n", "off" -> s = "0";
            case "infinity", "+infinity", "inf" -> {
                return "inf";
            }
            case "-infinity", "-inf" -> {
                return "-inf";
            }
            default -> {}
        }
        String digits = s.replace("$", "").replace(",", "");
        if (!digits.isEmpty() && digits.length() <= MAX_NUMBER_CHARS && looksNumeric(digits)) {
            try {
                return new BigDecimal(digits).stripTrailingZeros().toString();
            } catch (NumberFormatException e) {
                // not a number after all: keyed as text below
            }
        }
        if (s.length() >= 32 && s.length() <= 36 && s.indexOf('-') > 0) {
            try {
                return UUID.fromString(s).toString();
            } catch (IllegalArgumentException e) {
                // not a uuid
            }
        }
        return s;
    }

    private static boolean looksNumeric(String s) {
        char c = s.charAt(0);
        return Character.isDigit(c) || c == '-' || c == '+' || c == '.';
    }
}
