package dev.aura.realtime.common.config;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Typed access to environment variables, the only configuration source of both binaries.
 *
 * <p>Every getter fails with a {@link ConfigException} naming the variable and the value it
 * rejected; nothing is silently clamped. Units are part of the variable names ({@code _MS},
 * {@code _SECONDS}, {@code _BYTES}). Instances wrap a map so tests can pass their own.
 */
public final class Env {
    private final Map<String, String> vars;

    public Env(Map<String, String> vars) {
        this.vars = Map.copyOf(vars);
    }

    /** The process environment. */
    public static Env system() {
        return new Env(System.getenv());
    }

    /** The raw value, absent when unset or blank. */
    public Optional<String> optional(String name) {
        String value = vars.get(name);
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }

    /** @throws ConfigException when unset or blank */
    public String required(String name) {
        return optional(name).orElseThrow(() -> new ConfigException(name + " is required but not set"));
    }

    public String string(String name, String defaultValue) {
        return optional(name).orElse(defaultValue);
    }

    /** @throws ConfigException when the value is not an integer within [min, max] */
    public int integer(String name, int defaultValue, int min, int max) {
        // the range check keeps the result within int
        return (int) longValue(name, defaultValue, min, max);
    }

    /** @throws ConfigException when the value is not a long within [min, max] */
    public long longValue(String name, long defaultValue, long min, long max) {
        Optional<String> raw = optional(name);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        long parsed = parseLong(name, raw.get());
        if (parsed < min || parsed > max) {
            throw new ConfigException(name + "=" + raw.get() + " is out of range [" + min + ", " + max + "]");
        }
        return parsed;
    }

    /** A duration given in milliseconds by a variable whose name ends in {@code _MS}. */
    public Duration millis(String name, long defaultMs, long minMs, long maxMs) {
        return Duration.ofMillis(longValue(name, defaultMs, minMs, maxMs));
    }

    /** A duration given in seconds by a variable whose name ends in {@code _SECONDS}. */
    public Duration seconds(String name, long defaultSeconds, long minSeconds, long maxSeconds) {
        return Duration.ofSeconds(longValue(name, defaultSeconds, minSeconds, maxSeconds));
    }

    /** {@code true/false/1/0/yes/no}, case-insensitive. */
    public boolean bool(String name, boolean defaultValue) {
        Optional<String> raw = optional(name);
        if (raw.isEmpty()) {
            return defaultValue;
        }
        return switch (raw.get().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw new ConfigException(name + "=" + raw.get() + " is not a boolean (true|false)");
        };
    }

    /** One of {@code allowed} (case-insensitive), returned lower-case. */
    public String oneOf(String name, String defaultValue, Set<String> allowed) {
        String value = string(name, defaultValue).toLowerCase(Locale.ROOT);
        if (!allowed.contains(value)) {
            throw new ConfigException(name + "=" + value + " must be one of " + allowed);
        }
        return value;
    }

    // Getters by documented variable: the default comes from the EnvVar, written once.

    /** The variable's value or its documented default. */
    public String string(EnvVar var) {
        return string(var.name(), var.defaultValue());
    }

    /** @throws ConfigException when not an integer within [min, max] */
    public int integer(EnvVar var, int min, int max) {
        return integer(var.name(), Integer.parseInt(var.defaultValue()), min, max);
    }

    /** @throws ConfigException when not a long within [min, max] */
    public long longValue(EnvVar var, long min, long max) {
        return longValue(var.name(), Long.parseLong(var.defaultValue()), min, max);
    }

    /** A {@code _MS} variable as a duration. */
    public Duration millis(EnvVar var, long minMs, long maxMs) {
        return millis(var.name(), Long.parseLong(var.defaultValue()), minMs, maxMs);
    }

    /** A {@code _SECONDS} variable as a duration. */
    public Duration seconds(EnvVar var, long minSeconds, long maxSeconds) {
        return seconds(var.name(), Long.parseLong(var.defaultValue()), minSeconds, maxSeconds);
    }

    private static long parseLong(String name, String raw) {
        try {
            return Long.parseLong(raw);
        } catch (NumberFormatException e) {
            throw new ConfigException(name + "=" + raw + " is not an integer");
        }
    }
}
