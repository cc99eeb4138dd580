package dev.aura.realtime.common.wire;

/**
 * One column of a change event as realtime-js expects it: {@code {"name": "id", "type": "int8"}}
 * where {@code type} is the Postgres {@code pg_type.typname} (arrays are {@code _text},
 * {@code _int4}, ...). realtime-js converts values by this name (src/lib/transformers.ts).
 */
public record Column(String name, String type) {}
