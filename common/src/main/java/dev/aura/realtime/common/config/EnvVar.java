package dev.aura.realtime.common.config;

/**
 * One documented environment variable of a binary: the single list that config loading, the
 * Helm chart test and docs/configuration.md all use.
 *
 * @param name the variable name
 * @param defaultValue the default as text, or null when required / derived
 * @param unit unit of the value ("ms", "s", "bytes", "count", "" for none)
 * @param description one line for docs
 */
public record EnvVar(String name, String defaultValue, String unit, String description) {}
