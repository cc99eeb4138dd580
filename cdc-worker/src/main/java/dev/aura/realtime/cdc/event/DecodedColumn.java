package dev.aura.realtime.cdc.event;

/**
 * One column of a wal2json format-version 2 change: {@code {"name", "typeoid", "value"}}.
 *
 * @param name column name
 * @param typeOid {@code pg_type.oid} (from wal2json's {@code include-type-oids})
 * @param value the value as wal2json printed it (numbers unquoted, everything else a string), undecoded
 */
public record DecodedColumn(String name, long typeOid, RawValue value) {}
