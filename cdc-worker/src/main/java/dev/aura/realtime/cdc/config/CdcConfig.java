package dev.aura.realtime.cdc.config;

import static dev.aura.realtime.common.config.EnvVars.*;

import dev.aura.realtime.cdc.leader.LeaderConfig;
import dev.aura.realtime.common.config.Env;
import java.net.InetAddress;
import java.time.Duration;
import java.util.UUID;

/**
 * The cdc-worker's configuration, read once at start-up from environment variables (see
 * {@link dev.aura.realtime.common.config.EnvVars} and docs/configuration.md).
 *
 * @param replicationUrl JDBC URL of a role with REPLICATION, used for slot polling
 * @param postgresUrl JDBC URL for platform tables, RLS checks and the control API
 * @param natsUrl NATS server URL(s)
 * @param jwtSecret HS256 secret (>= 32 bytes)
 * @param httpPort health/metrics/control API port
 * @param slotName logical replication slot name
 * @param batchSize {@code upto_nchanges} of each peek (rows; checked at commit boundaries)
 * @param fetchSize JDBC fetch size while streaming a peek result (rows)
 * @param idleBackoff sleep after an empty poll
 * @param tableRefresh refresh period of the enabled-table list
 * @param numShards RLS worker shards
 * @param maxRecordBytes serialized record size above which values over 64 bytes are dropped
 * @param redecodeWarnBytes restart_lsn → confirmed_flush_lsn distance above which each inspection warns
 * @param instanceId this process's id (Aura-Origin header, lease identity fallback)
 * @param leader leader election settings ({@code LEADER_ELECTION}, {@code LEASE_*})
 * @param naiveRls {@code CDC_RLS_MODE=naive}: one RLS query per (change, subscriber), the benchmark
 *     baseline of bench/ (default {@code batched}); not for production
 */
public record CdcConfig(
        String replicationUrl,
        String postgresUrl,
        String natsUrl,
        String jwtSecret,
        int httpPort,
        String slotName,
        int batchSize,
        int fetchSize,
        Duration idleBackoff,
        Duration tableRefresh,
        int numShards,
        int maxRecordBytes,
        long redecodeWarnBytes,
        String instanceId,
        LeaderConfig leader,
        boolean naiveRls) {

    /** Benchmark-only knob (bench/ RlsBench); to be listed in EnvVars by common's owner. */

    /** @throws dev.aura.realtime.common.config.ConfigException naming the first bad variable */
    public static CdcConfig fromEnv(Env env) {
        String replication = env.required(POSTGRES_REPLICATION_URL.name());
        String slot = env.string(CDC_SLOT_NAME);
        if (!slot.matches("[a-z0-9_]{1,63}")) {
            // Postgres rule: slot names use lower-case letters, digits and underscores (ReplicationSlotValidateName).
            throw new dev.aura.realtime.common.config.ConfigException(
                    CDC_SLOT_NAME.name() + "=" + slot + " must match [a-z0-9_]{1,63} (Postgres slot name rules)");
        }
        return new CdcConfig(
                replication,
                env.string(POSTGRES_URL.name(), replication),
                env.string(NATS_URL),
                env.required(AURA_JWT_SECRET.name()),
                env.integer(CDC_HTTP_PORT, 0, 65535),
                slot,
                env.integer(CDC_BATCH_SIZE, 1, 1_000_000),
                env.integer(CDC_FETCH_SIZE, 1, 100_000),
                env.millis(CDC_IDLE_BACKOFF_MS, 0, 60_000),
                env.millis(CDC_TABLE_REFRESH_MS, 100, 3_600_000),
                env.integer(CDC_NUM_SHARDS, 1, 256),
                env.integer(CDC_MAX_RECORD_BYTES, 1024, 64 * 1024 * 1024),
                env.longValue(CDC_REDECODE_WARN_BYTES, 0, Long.MAX_VALUE),
                instanceId(env),
                LeaderConfig.fromEnv(env),
                rlsMode(env));
    }

    private static boolean rlsMode(Env env) {
        return "naive"
                .equals(env.oneOf(
                        CDC_RLS_MODE.name(), CDC_RLS_MODE.defaultValue(), java.util.Set.of("batched", "naive")));
    }

    static String instanceId(Env env) {
        return env.optional(INSTANCE_ID.name())
                .or(() -> env.optional(POD_NAME.name()))
                .orElseGet(() -> hostName() + "-" + UUID.randomUUID().toString().substring(0, 8));
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return "cdc-worker";
        }
    }
}
