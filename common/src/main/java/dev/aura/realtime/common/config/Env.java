package dev.aura.realtime.common.config;

import java.util.Map;
import java.util.Optional;

/**
 * The environment variables a binary starts with, the only configuration source of both
 * binaries. Values are read through their declarations ({@link Setting#read}, {@link Setting#find}),
 * which parse and check them and fail with a {@link ConfigException} naming the variable and the
 * value refused; nothing is silently clamped. Instances wrap a map so tests can pass their own.
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

    /** The raw value, trimmed; absent when unset or blank. */
    public Optional<String> optional(String name) {
        String value = vars.get(name);
        return value == null || value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }
}
