package dev.aura.realtime.common.config;

/** Thrown at start-up when an environment variable is missing or malformed; the message names the variable. */
public final class ConfigException extends RuntimeException {
    public ConfigException(String message) {
        super(message);
    }
}
