package dev.aura.realtime.common.config;

import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.LongFunction;
import java.util.regex.Pattern;

/**
 * How the text of one {@link Setting}'s variable becomes its value, and which values it allows:
 * a number within a range, a boolean, one of a list of choices, or text that may have to match a
 * pattern. Immutable; the {@code with*} methods return a changed copy.
 *
 * @param kind which of the four
 * @param fromNumber NUMBER: the value of the checked number
 * @param fromText BOOLEAN, CHOICE, TEXT: the value of the checked text
 * @param lowest NUMBER: the least the type holds; {@code min} lies above
 * @param highest NUMBER: the most the type holds; {@code max} lies below
 * @param min NUMBER: least value allowed
 * @param max NUMBER: largest value allowed
 * @param choices CHOICE: the values allowed, lower case
 * @param pattern TEXT: what the value must match, or null
 * @param patternRule TEXT: whose rule the pattern is, for the error message
 */
record ValueRule<T>(
        Kind kind,
        LongFunction<T> fromNumber,
        Function<String, T> fromText,
        long lowest,
        long highest,
        long min,
        long max,
        List<String> choices,
        Pattern pattern,
        String patternRule) {

    enum Kind {
        NUMBER,
        BOOLEAN,
        CHOICE,
        TEXT
    }

    ValueRule {
        choices = List.copyOf(choices);
    }

    static <T> ValueRule<T> number(long lowest, long highest, LongFunction<T> of) {
        return new ValueRule<>(Kind.NUMBER, of, null, lowest, highest, lowest, highest, List.of(), null, null);
    }

    static <T> ValueRule<T> text(Kind kind, Function<String, T> of, List<String> choices) {
        return new ValueRule<>(kind, null, of, 0, 0, 0, 0, choices, null, null);
    }

    ValueRule<T> withRange(String name, long newMin, long newMax) {
        if (kind != Kind.NUMBER) {
            throw new IllegalStateException(name + " is not a number");
        }
        if (newMin > newMax || newMin < lowest || newMax > highest) {
            throw new IllegalArgumentException(name + ": range [" + newMin + ", " + newMax + "] is empty or exceeds ["
                    + lowest + ", " + highest + "]");
        }
        return new ValueRule<>(kind, fromNumber, fromText, lowest, highest, newMin, newMax, choices, null, null);
    }

    ValueRule<T> withPattern(String name, String regex, String rule) {
        if (kind != Kind.TEXT) {
            throw new IllegalStateException(name + " is not free text");
        }
        return new ValueRule<>(
                kind, fromNumber, fromText, lowest, highest, min, max, choices, Pattern.compile(regex), rule);
    }

    /** @throws ConfigException naming {@code name} and the refused value */
    T parse(String name, String raw) {
        return switch (kind) {
            case NUMBER -> fromNumber.apply(checkedNumber(name, raw));
            case BOOLEAN -> fromText.apply(raw);
            case CHOICE -> {
                String value = raw.toLowerCase(Locale.ROOT);
                if (!choices.contains(value)) {
                    throw new ConfigException(name + "=" + value + " must be one of " + choices);
                }
                yield fromText.apply(value);
            }
            case TEXT -> {
                if (pattern != null && !pattern.matcher(raw).matches()) {
                    throw new ConfigException(
                            name + "=" + raw + " must match " + pattern.pattern() + " (" + patternRule + ")");
                }
                yield fromText.apply(raw);
            }
        };
    }

    private long checkedNumber(String name, String raw) {
        long parsed;
        try {
            parsed = Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw new ConfigException(name + "=" + raw + " is not an integer");
        }
        if (parsed < min || parsed > max) {
            throw new ConfigException(name + "=" + raw + " is out of range [" + min + ", " + max + "]");
        }
        return parsed;
    }

    /** The values allowed, as the docs show them. */
    String describe() {
        return switch (kind) {
            case NUMBER -> {
                if (max == highest) {
                    yield min == lowest ? "" : "≥ " + min;
                }
                yield min + " to " + max;
            }
            case BOOLEAN -> "true, false";
            case CHOICE -> String.join(", ", choices);
            case TEXT -> pattern == null ? "" : pattern.pattern();
        };
    }
}
