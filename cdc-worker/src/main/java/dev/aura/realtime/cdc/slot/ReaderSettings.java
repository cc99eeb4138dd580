package dev.aura.realtime.cdc.slot;

import java.time.Duration;

/**
 * Settings of the slot readers (docs/design.md C4, C12).
 *
 * @param replicationUrl {@code POSTGRES_REPLICATION_URL}
 * @param batchSize {@code upto_nchanges} of a peek (poll source)
 * @param fetchSize JDBC fetch size of a peek (poll source), lowered to fit {@code fetchBytes}
 * @param fetchBytes bytes the driver may hold of one fetch (poll source)
 * @param maxRecordBytes {@code CDC_MAX_RECORD_BYTES}: rows that cannot fit two such records are cut by Postgres (poll source)
 * @param idleBackoff sleep after an empty poll (poll source)
 * @param maxBackoff ceiling of the backoff after a failure
 * @param redecodeWarnBytes warn when restart_lsn lags confirmed_flush_lsn by more than this ({@code CDC_REDECODE_WARN_BYTES})
 * @param statusInterval how often the stream source reports its position unasked (stream source)
 * @param confirmEvery longest the stream source reads before it confirms what NATS took (stream source)
 */
public record ReaderSettings(
        String replicationUrl,
        int batchSize,
        int fetchSize,
        long fetchBytes,
        int maxRecordBytes,
        Duration idleBackoff,
        Duration maxBackoff,
        long redecodeWarnBytes,
        Duration statusInterval,
        Duration confirmEvery) {}
