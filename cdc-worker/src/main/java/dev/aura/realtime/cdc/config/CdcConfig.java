package dev.aura.realtime.cdc.config;

import static dev.aura.realtime.cdc.config.CdcSettings.*;
import static dev.aura.realtime.common.config.SharedSettings.AURA_JWT_SECRET;
import static dev.aura.realtime.common.config.SharedSettings.REGISTRY_BUCKET_MAX_BYTES;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.InstanceId;
import dev.aura.realtime.common.config.JwtSettings;
import dev.aura.realtime.common.config.NatsSettings;
import java.time.Duration;

/**
 * The cdc-worker's configuration, read once at start-up from environment variables (declared in
 * {@link CdcSettings}; docs/configuration.md), plus the fixed
 * {@link Timings} that are not environment variables. Every number the worker runs with is here.
 *
 * @param replicationUrl JDBC URL of a role with REPLICATION, used for slot polling
 * @param postgresUrl JDBC URL of the platform login: platform tables, catalogs, the control API
 * @param nats NATS servers, credentials and TLS ({@code NATS_*})
 * @param jwtSecret HS256 secret (>= 32 bytes)
 * @param jwt the signing keys of client tokens ({@code AURA_JWT_*}, {@link JwtSettings}), for the control API
 * @param httpPort health/metrics/control API port
 * @param slotName logical replication slot name
 * @param source how the slot is read ({@code CDC_SOURCE})
 * @param bufferBytes heap for changes between the slot and NATS's confirmation ({@code CDC_BUFFER_BYTES}):
 *     half for the shard queues, a quarter for the poll source's fetch, a quarter for publishes
 *     not yet confirmed
 * @param batchSize {@code upto_nchanges} of each peek (rows; checked at commit boundaries)
 * @param fetchSize JDBC fetch size while streaming a peek result (rows)
 * @param idleBackoff sleep after an empty poll
 * @param tableRefresh refresh period of the enabled-table list
 * @param numShards RLS worker shards
 * @param maxRecordBytes serialized record size above which values over 64 bytes are dropped
 * @param redecodeWarnBytes restart_lsn → confirmed_flush_lsn distance above which each inspection warns
 * @param instanceId this process's id ({@code Aura-Origin} header and lease holder identity)
 * @param registryBucketMaxBytes byte limit of the subscription registry bucket when this worker creates it
 * @param leader leader election settings ({@code LEADER_ELECTION}, {@code LEASE_*})
 * @param tenantSql the login and timeouts of tenant SQL ({@code POSTGRES_TENANT_URL},
 *     {@code CDC_TENANT_*}; docs/security.md)
 * @param messages the projects' realtime messages tables ({@code CDC_MESSAGES_*}; docs/design.md H2)
 * @param history the per-project history streams of resume ({@code AURA_HISTORY_*}; docs/design.md R)
 * @param containment the late lanes and quarantines ({@code CDC_LATE_*}, {@code CDC_QUARANTINE_*};
 *     docs/design.md C13, C14)
 * @param projectJwks how a project's JWKS URL is fetched ({@code PROJECT_JWKS_*}; docs/security.md)
 * @param timings fixed periods and sizes ({@link Timings#DEFAULT})
 */
public record CdcConfig(
        String replicationUrl,
        String postgresUrl,
        NatsSettings nats,
        String jwtSecret,
        JwtSettings jwt,
        int httpPort,
        String slotName,
        CdcSource source,
        long bufferBytes,
        int batchSize,
        int fetchSize,
        Duration idleBackoff,
        Duration tableRefresh,
        int numShards,
        int maxRecordBytes,
        long redecodeWarnBytes,
        String instanceId,
        long registryBucketMaxBytes,
        LeaderConfig leader,
        TenantSqlConfig tenantSql,
        Messages messages,
        History history,
        Containment containment,
        ProjectJwks projectJwks,
        Timings timings) {

    /**
     * The fetches of projects' JWKS URLs (docs/security.md "Each project's own keys"); their cache
     * time and refresh rate are {@code AURA_JWT_JWKS_CACHE_SECONDS} and
     * {@code AURA_JWT_JWKS_MIN_REFRESH_SECONDS}, as for the platform's URL.
     *
     * @param timeout {@code PROJECT_JWKS_TIMEOUT_MS}, the whole fetch
     * @param maxBytes {@code PROJECT_JWKS_MAX_BYTES}
     * @param privateAddresses {@code PROJECT_JWKS_PRIVATE_ADDRESSES}
     */
    public record ProjectJwks(Duration timeout, long maxBytes, boolean privateAddresses) {}

    /**
     * The projects' late lanes and quarantines (docs/design.md C13, C14); their streams are stored
     * as the history streams are ({@link History#fileStorage}, {@link History#replicas}).
     *
     * @param shardCheckBudget {@code CDC_SHARD_CHECK_BUDGET_MS}
     * @param lateCheckTimeout {@code CDC_LATE_CHECK_TIMEOUT_MS}
     * @param lateLaneBytes {@code CDC_LATE_LANE_BYTES}, per project
     * @param quarantineBytes {@code CDC_QUARANTINE_BYTES}, per project
     * @param quarantineMaxAge {@code CDC_QUARANTINE_MAX_AGE_HOURS}
     */
    public record Containment(
            Duration shardCheckBudget,
            Duration lateCheckTimeout,
            long lateLaneBytes,
            long quarantineBytes,
            Duration quarantineMaxAge) {}

    /**
     * The per-project history streams of postgres_changes resume (docs/design.md R).
     *
     * @param fileStorage {@code AURA_HISTORY_STORAGE=file} (else memory)
     * @param replicas {@code AURA_HISTORY_REPLICAS}
     * @param refresh {@code AURA_HISTORY_REFRESH_MS}: how often the projects with resume on are re-read
     * @param defaultResumeSeconds {@code AURA_RESUME_DEFAULT_SECONDS}: the window of a project that
     *     sets none ({@code postgres_changes_resume_seconds} NULL)
     */
    public record History(boolean fileStorage, int replicas, Duration refresh, int defaultResumeSeconds) {}

    /**
     * The projects' realtime messages tables (docs/design.md H2).
     *
     * @param retention how long messages are kept ({@code CDC_MESSAGES_RETENTION_HOURS})
     * @param janitorPeriod how often the leader deletes older ones ({@code CDC_MESSAGES_JANITOR_MS})
     */
    public record Messages(Duration retention, Duration janitorPeriod) {}

    /**
     * Periods and sizes that are not configurable by environment variables.
     *
     * @param staleAfterBase {@code cdc_active} turns false when no poll succeeded for this plus
     *     twice {@code CDC_IDLE_BACKOFF_MS} (a poll takes at most one idle backoff to come round)
     * @param streamStatusInterval how often the stream source tells Postgres its position unasked
     * @param streamConfirmEvery longest time the stream source reads before it confirms what NATS took
     * @param tableSecurityTtl how long a table's RLS flag and primary key are cached, i.e. how
     *     soon {@code ALTER TABLE ... ENABLE ROW LEVEL SECURITY} takes effect
     * @param flushTimeout how long a batch waits for NATS to confirm its publishes
     * @param registryResyncPeriod period of the full re-watch of the subscription registry
     * @param registryLoadTimeout how long start-up waits for the registry's first load (after it,
     *     start-up goes on, but no batch is matched until the load completes)
     * @param registrySyncTimeout how long a batch waits for the registry view to catch up with the
     *     bucket (read-your-writes, {@code RegistryWatch#awaitCurrent}) before it fails
     * @param registryReputTimeout after a NATS reconnect, how long matching waits for the
     *     ws-front replicas that owned bindings to re-put them
     * @param pollMaxBackoff ceiling of the exponential backoff after a poll-loop failure
     * @param startBackoff first pause before retrying start-up while Postgres or NATS is
     *     unreachable; doubles up to {@code startMaxBackoff}
     * @param startMaxBackoff ceiling of that backoff
     * @param statusTick how often the CDC status is checked for a change to publish
     * @param extraPoolConnections Postgres pool connections beyond one per shard (control API,
     *     subscription checks, table refresh, type lookups)
     * @param connectTimeout NATS connect and Postgres pool checkout timeout
     * @param natsReconnectWait pause between NATS reconnect attempts
     * @param tenantJoinConnections tenant pool connections for join-time checks, beyond one per
     *     shard; join-time checks never take more, so they cannot starve the RLS checks
     * @param tenantStatusRecheck how often the tenant login's privileges are verified again
     * @param controlLockTimeout how long the control API's {@code ALTER TABLE} waits for the
     *     table's lock before answering 409
     */
    public record Timings(
            Duration staleAfterBase,
            Duration streamStatusInterval,
            Duration streamConfirmEvery,
            Duration tableSecurityTtl,
            Duration flushTimeout,
            Duration registryResyncPeriod,
            Duration registryLoadTimeout,
            Duration registrySyncTimeout,
            Duration registryReputTimeout,
            Duration pollMaxBackoff,
            Duration startBackoff,
            Duration startMaxBackoff,
            Duration statusTick,
            int extraPoolConnections,
            Duration connectTimeout,
            Duration natsReconnectWait,
            int tenantJoinConnections,
            Duration tenantStatusRecheck,
            Duration controlLockTimeout) {

        public static final Timings DEFAULT = new Timings(
                Duration.ofSeconds(10),
                Duration.ofSeconds(10),
                Duration.ofMillis(200),
                Duration.ofSeconds(2),
                Duration.ofSeconds(5),
                Duration.ofSeconds(60),
                Duration.ofSeconds(10),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(5),
                Duration.ofMillis(200),
                Duration.ofSeconds(5),
                Duration.ofMillis(250),
                4,
                Duration.ofSeconds(5),
                Duration.ofMillis(500),
                4,
                Duration.ofSeconds(30),
                Duration.ofSeconds(3));
    }

    /** @throws ConfigException naming the first bad variable */
    public static CdcConfig fromEnv(Env env) {
        String replication = POSTGRES_REPLICATION_URL.read(env);
        String slot = CDC_SLOT_NAME.read(env);
        String instanceId = InstanceId.fromEnv(env, "cdc-worker");
        String postgresUrl = POSTGRES_URL.find(env).orElse(replication);
        String secret = AURA_JWT_SECRET.read(env);
        return new CdcConfig(
                replication,
                postgresUrl,
                NatsSettings.fromEnv(env),
                secret,
                JwtSettings.fromEnv(env),
                CDC_HTTP_PORT.read(env),
                slot,
                CDC_SOURCE.read(env),
                CDC_BUFFER_BYTES.read(env),
                CDC_BATCH_SIZE.read(env),
                CDC_FETCH_SIZE.read(env),
                CDC_IDLE_BACKOFF_MS.read(env),
                CDC_TABLE_REFRESH_MS.read(env),
                CDC_NUM_SHARDS.read(env),
                CDC_MAX_RECORD_BYTES.read(env),
                CDC_REDECODE_WARN_BYTES.read(env),
                instanceId,
                REGISTRY_BUCKET_MAX_BYTES.read(env),
                LeaderConfig.fromEnv(env, instanceId),
                tenantSql(env, postgresUrl, secret, slot),
                new Messages(CDC_MESSAGES_RETENTION_HOURS.read(env), CDC_MESSAGES_JANITOR_MS.read(env)),
                new History(
                        AURA_HISTORY_STORAGE.read(env).equals("file"),
                        AURA_HISTORY_REPLICAS.read(env),
                        AURA_HISTORY_REFRESH_MS.read(env),
                        Math.toIntExact(AURA_RESUME_DEFAULT_SECONDS.read(env).toSeconds())),
                new Containment(
                        CDC_SHARD_CHECK_BUDGET_MS.read(env),
                        CDC_LATE_CHECK_TIMEOUT_MS.read(env),
                        CDC_LATE_LANE_BYTES.read(env),
                        CDC_QUARANTINE_BYTES.read(env),
                        CDC_QUARANTINE_MAX_AGE_HOURS.read(env)),
                new ProjectJwks(
                        PROJECT_JWKS_TIMEOUT_MS.read(env),
                        PROJECT_JWKS_MAX_BYTES.read(env),
                        PROJECT_JWKS_PRIVATE_ADDRESSES.read(env)),
                Timings.DEFAULT);
    }

    private static TenantSqlConfig tenantSql(Env env, String postgresUrl, String secret, String slot) {
        Duration statementTimeout = CDC_TENANT_STATEMENT_TIMEOUT_MS.read(env);
        Duration lockTimeout = CDC_TENANT_LOCK_TIMEOUT_MS.read(env);
        return POSTGRES_TENANT_URL
                .find(env)
                .map(url -> new TenantSqlConfig(url, null, null, statementTimeout, lockTimeout))
                .orElseGet(() -> {
                    String login = TenantSqlConfig.loginFor(slot);
                    return new TenantSqlConfig(
                            postgresUrl,
                            login,
                            TenantSqlConfig.passwordFor(secret, login),
                            statementTimeout,
                            lockTimeout);
                });
    }

    /** No successful poll for this long makes {@code cdc_active} false ({@code /health}). */
    public Duration staleAfter() {
        return timings.staleAfterBase().plus(idleBackoff.multipliedBy(2));
    }

    /** Heap cost of the changes queued per RLS shard before the reader blocks: half the buffer, split. */
    public long shardQueueBytes() {
        return bufferBytes / 2 / numShards;
    }

    /** Bytes a shard publishes before it waits for NATS to confirm them: a quarter of the buffer, split. */
    public long unconfirmedBytesPerShard() {
        return bufferBytes / 4 / numShards;
    }

    /** The poll source's share of the buffer for the rows the driver fetches at once. */
    public long fetchBytes() {
        return bufferBytes / 4;
    }

    /** Size of the Postgres pool: one connection per RLS shard plus {@link Timings#extraPoolConnections}. */
    public int poolSize() {
        return numShards + timings.extraPoolConnections();
    }
}
