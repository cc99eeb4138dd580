package dev.aura.realtime.common.config;

import dev.aura.realtime.common.config.ValueRule.Kind;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.function.LongFunction;

/**
 * One environment variable a binary reads, declared once by the binary that reads it: its name,
 * type, unit, default, allowed range and one line of documentation, together (Debezium's
 * {@code Field}). Config records read values only through {@link #read} and {@link #find}, so the
 * parsing, range and default they apply are the ones docs/configuration.md shows (generated from
 * the declarations) and the chart test checks the rendered manifests against.
 *
 * <p>The default is kept as the text one would write in the environment and is parsed by the same
 * rules as a value read, when the declaration is made: a default outside its range fails the
 * class that declares it, before any test or start-up can use it.
 *
 * <p>Declarations are immutable; {@link #range}, {@link #matching} and {@link #doc} return a
 * changed copy, e.g. {@code Setting.integer("CDC_NUM_SHARDS", "count", 4).range(1, 256).doc("...")}.
 *
 * @param <T> the type of the value read
 */
public final class Setting<T> {
    private final String name;
    private final String unit;
    private final String doc;
    private final ValueRule<T> rule;
    /** The default as written in the environment, or null without one. */
    private final String defaultText;
    /** Without a default: null when required, else what an unset variable means (docs). */
    private final String whenUnset;

    private final T defaultValue;

    private Setting(String name, String unit, String doc, ValueRule<T> rule, String defaultText, String whenUnset) {
        this.name = Objects.requireNonNull(name, "name");
        this.unit = Objects.requireNonNull(unit, "unit");
        this.doc = Objects.requireNonNull(doc, "doc");
        this.rule = rule;
        this.defaultText = defaultText;
        this.whenUnset = whenUnset;
        try {
            this.defaultValue = defaultText == null ? null : rule.parse(name, defaultText);
        } catch (ConfigException e) {
            throw new IllegalArgumentException("the default of " + name + " breaks its own rule: " + e.getMessage());
        }
    }

    private static <T> Setting<T> number(
            String name, String unit, long defaultValue, long lowest, long highest, LongFunction<T> of) {
        return new Setting<>(name, unit, "", ValueRule.number(lowest, highest, of), Long.toString(defaultValue), null);
    }

    /** A whole number of {@code unit} (e.g. "count", "port", "events/s"). */
    public static Setting<Integer> integer(String name, String unit, int defaultValue) {
        return number(name, unit, defaultValue, Integer.MIN_VALUE, Integer.MAX_VALUE, n -> (int) n);
    }

    /** A whole number of {@code unit} that may exceed an int. */
    public static Setting<Long> longValue(String name, String unit, long defaultValue) {
        return number(name, unit, defaultValue, Long.MIN_VALUE, Long.MAX_VALUE, n -> n);
    }

    /** A size in bytes, for a variable named {@code *_BYTES}. */
    public static Setting<Long> bytes(String name, long defaultValue) {
        return number(name, "bytes", defaultValue, 0, Long.MAX_VALUE, n -> n);
    }

    /** A duration in milliseconds, for a variable named {@code *_MS}. */
    public static Setting<Duration> millis(String name, long defaultMs) {
        return number(name, "ms", defaultMs, 0, Long.MAX_VALUE, Duration::ofMillis);
    }

    /** A duration in seconds, for a variable named {@code *_SECONDS}. */
    public static Setting<Duration> seconds(String name, long defaultSeconds) {
        return number(name, "s", defaultSeconds, 0, Long.MAX_VALUE / 1_000, Duration::ofSeconds);
    }

    /** A duration in hours, for a variable named {@code *_HOURS}. */
    public static Setting<Duration> hours(String name, long defaultHours) {
        return number(name, "h", defaultHours, 0, Long.MAX_VALUE / 3_600_000, Duration::ofHours);
    }

    /** {@code true/false/1/0/yes/no/on/off}, case-insensitive. */
    public static Setting<Boolean> bool(String name, boolean defaultValue) {
        ValueRule<Boolean> rule = ValueRule.text(Kind.BOOLEAN, raw -> parseBool(name, raw), List.of());
        return new Setting<>(name, "", "", rule, Boolean.toString(defaultValue), null);
    }

    /** Free text with a default; {@link #matching} restricts it. */
    public static Setting<String> text(String name, String defaultValue) {
        return new Setting<>(name, "", "", anyText(), Objects.requireNonNull(defaultValue), null);
    }

    /** One of {@code choices} (lower case; read case-insensitively and returned lower-case). */
    public static Setting<String> oneOf(String name, String defaultValue, String... choices) {
        ValueRule<String> rule = ValueRule.text(Kind.CHOICE, raw -> raw, Arrays.asList(choices));
        return new Setting<>(name, "", "", rule, defaultValue, null);
    }

    /** One constant of {@code defaultValue}'s enum, written as its lower-case name. */
    public static <E extends Enum<E>> Setting<E> oneOf(String name, E defaultValue) {
        Class<E> type = defaultValue.getDeclaringClass();
        List<String> choices = Arrays.stream(type.getEnumConstants())
                .map(e -> e.name().toLowerCase(Locale.ROOT))
                .toList();
        ValueRule<E> rule =
                ValueRule.text(Kind.CHOICE, raw -> Enum.valueOf(type, raw.toUpperCase(Locale.ROOT)), choices);
        return new Setting<>(name, "", "", rule, defaultValue.name().toLowerCase(Locale.ROOT), null);
    }

    /** Text without which the binary does not start. */
    public static Setting<String> required(String name) {
        return new Setting<>(name, "", "", anyText(), null, null);
    }

    /**
     * Text without a default, read with {@link #find}.
     *
     * @param whenUnset what an unset variable means, for the docs: "(unset)", or where the value
     *     comes from then (another variable, a derivation)
     */
    public static Setting<String> optional(String name, String whenUnset) {
        return new Setting<>(name, "", "", anyText(), null, Objects.requireNonNull(whenUnset));
    }

    private static ValueRule<String> anyText() {
        return ValueRule.text(Kind.TEXT, raw -> raw, List.of());
    }

    /** This declaration with the values allowed restricted to [min, max] (in its unit). */
    public Setting<T> range(long min, long max) {
        return new Setting<>(name, unit, doc, rule.withRange(name, min, max), defaultText, whenUnset);
    }

    /** This text declaration with values restricted to {@code regex}; {@code whose} says whose rule it is. */
    public Setting<T> matching(String regex, String whose) {
        return new Setting<>(name, unit, doc, rule.withPattern(name, regex, whose), defaultText, whenUnset);
    }

    /** This declaration with its line of docs/configuration.md. */
    public Setting<T> doc(String text) {
        return new Setting<>(name, unit, text, rule, defaultText, whenUnset);
    }

    /**
     * The variable's value, else the default.
     *
     * @throws ConfigException naming the variable and the value it refused, or a required
     *     variable that is unset
     * @throws IllegalStateException for a setting without default (read it with {@link #find})
     */
    public T read(Env env) {
        Optional<String> raw = env.optional(name);
        if (raw.isPresent()) {
            return rule.parse(name, raw.get());
        }
        if (defaultText != null) {
            return defaultValue;
        }
        if (whenUnset == null) {
            throw new ConfigException(name + " is required but not set");
        }
        throw new IllegalStateException(name + " has no default; read it with find");
    }

    /**
     * The variable's value, or empty when unset or blank (the default is not applied).
     *
     * @throws ConfigException naming the variable and the value it refused
     */
    public Optional<T> find(Env env) {
        return env.optional(name).map(raw -> rule.parse(name, raw));
    }

    private static Boolean parseBool(String name, String raw) {
        return switch (raw.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw new ConfigException(name + "=" + raw + " is not a boolean (true|false)");
        };
    }

    public String name() {
        return name;
    }

    /** The unit of the value ("ms", "s", "h", "bytes", "count", ...), empty for none. */
    public String unit() {
        return unit;
    }

    /** The line of docs/configuration.md; empty until {@link #doc(String)} gives it. */
    public String doc() {
        return doc;
    }

    /** True when the binary refuses to start without the variable. */
    public boolean isRequired() {
        return defaultText == null && whenUnset == null;
    }

    /** The default as one would write it in the environment, empty when there is none. */
    public Optional<String> defaultText() {
        return Optional.ofNullable(defaultText);
    }

    /**
     * The value of an unset variable.
     *
     * @throws IllegalStateException when the setting has no default
     */
    public T defaultValue() {
        if (defaultText == null) {
            throw new IllegalStateException(name + " has no default");
        }
        return defaultValue;
    }

    /** The default column of the docs: the default, else what unset means, else "(required)". */
    public String defaultDoc() {
        if (defaultText != null) {
            return defaultText;
        }
        return whenUnset == null ? "(required)" : whenUnset;
    }

    /** The values allowed, as the docs show them: "1 to 256", "≥ 1024", "stream, poll", a pattern, or empty. */
    public String rangeDoc() {
        return rule.describe();
    }

    @Override
    public String toString() {
        return "Setting[" + name + "]";
    }
}
