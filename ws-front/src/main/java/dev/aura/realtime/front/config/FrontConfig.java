package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.EnvVars;
import dev.aura.realtime.common.config.InstanceId;
import dev.aura.realtime.common.config.JwtSettings;
import dev.aura.realtime.common.config.NatsSettings;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.time.Duration;

/**
 * The whole ws-front configuration, read once at start-up from environment variables. Invalid
 * values and invalid combinations throw {@link ConfigException} naming the variable.
 *
 * @param nats {@code NATS_URL}, credentials and TLS ({@code NATS_*})
 * @param jwtSecret {@code AURA_JWT_SECRET} (required), HS256 secret of client tokens
 * @param jwt the signing keys of client tokens ({@code AURA_JWT_*}, {@link JwtSettings})
 * @param wsPort {@code WS_PORT} (4000), the one HTTP/WebSocket port; 0 picks a free port
 * @param historySize {@code HISTORY_SIZE} (100 messages), broadcast history ring per channel
 * @param instanceId {@code INSTANCE_ID}, else {@code POD_NAME}, else hostname-random ({@link InstanceId})
 * @param ioThreads {@code WS_IO_THREADS} (0 = Netty's default of 2 x cores), event loop threads
 * @param maxFrameBytes {@code WS_MAX_FRAME_BYTES} (5,000,000 bytes), largest WebSocket message
 * @param idleTimeout {@code WS_IDLE_TIMEOUT_MS} (60,000 ms) without any inbound frame closes a socket
 * @param maxChannelsPerConnection {@code WS_MAX_CHANNELS_PER_CONNECTION} (100)
 * @param maxJoinsPerSecond {@code WS_MAX_JOINS_PER_SECOND} (100 joins/s per connection)
 * @param maxEventsPerSecond {@code WS_MAX_EVENTS_PER_SECOND} (100 client events/s per connection)
 * @param maxBroadcastPayloadBytes {@code WS_MAX_BROADCAST_PAYLOAD_BYTES} (3,072,000 bytes), default per project
 * @param writeBufferLowBytes {@code WS_WRITE_BUFFER_LOW_BYTES} (262,144 bytes), writable again below
 * @param writeBufferHighBytes {@code WS_WRITE_BUFFER_HIGH_BYTES} (1,048,576 bytes), unwritable above
 * @param maxOutboundBytes {@code WS_MAX_OUTBOUND_BYTES} (8,388,608 bytes), queued bytes that disconnect at once
 * @param slowClientTimeout {@code WS_SLOW_CLIENT_TIMEOUT_MS} (10,000 ms) unwritable before disconnect
 * @param maxQueueDelay {@code WS_MAX_QUEUE_DELAY_MS} (5,000 ms) a message may wait in an event loop's
 *     queue before its recipients are disconnected instead
 * @param maxQueueBytes {@code WS_MAX_QUEUE_BYTES} (256 MiB) queued per event loop before a message's
 *     recipients are disconnected instead
 * @param subscriptionCheckTimeout {@code SUBSCRIPTION_CHECK_TIMEOUT_MS} (2,000 ms) for the cdc-worker's answer
 * @param subscriptionRefresh {@code SUBSCRIPTION_REFRESH_MS} (30,000 ms) between re-puts of registry entries
 * @param subscriptionTtl max age of the KV bucket, fixed by the wire contract ({@code SubscriptionEntry.MAX_AGE}, 120 s)
 * @param shutdownGrace {@code WS_SHUTDOWN_GRACE_SECONDS} (20 s) between "Server requested disconnect" and forced close
 * @param presence presence settings ({@link PresenceConfig})
 * @param historyMaxChannels {@code HISTORY_MAX_CHANNELS} (10,000) channels with broadcast history
 * @param historyMaxBytes {@code HISTORY_MAX_BYTES} (64 MiB) broadcast history in all
 * @param historyTtl {@code HISTORY_TTL_SECONDS} (600 s) without a broadcast drops a channel's history
 * @param cdcStatusTimeout {@code WS_CDC_STATUS_TIMEOUT_MS} (15,000 ms) of cdc-worker silence reported as CDC
 *     down; must exceed the status heartbeat ({@link CdcStatus#HEARTBEAT}, 5 s)
 * @param replicationReadyTimeout {@code WS_REPLICATION_READY_TIMEOUT_MS} (15,000 ms) a join with
 *     {@code config.broadcast.replication_ready} waits for changes to flow before it is told they do not
 * @param sseHeartbeat {@code SSE_HEARTBEAT_MS} (15,000 ms) between SSE keep-alive comments
 * @param registryBucketMaxBytes {@code REGISTRY_BUCKET_MAX_BYTES} (64 MiB), byte limit of the
 *     registry bucket when this replica creates it or finds it different
 * @param dedupeWindowEvents {@code WS_DEDUPE_WINDOW_EVENTS} (100,000) change event ids remembered
 *     to drop re-published duplicates
 * @param dedupeWindowBytes {@code WS_DEDUPE_WINDOW_BYTES} (16 MiB) memory bound of those ids
 * @param maxBindingsPerJoin {@code WS_MAX_BINDINGS_PER_JOIN} (100) postgres_changes bindings in one join
 * @param maxPresencePayloadBytes {@code WS_MAX_PRESENCE_PAYLOAD_BYTES} (10,240 bytes) of one track payload
 * @param historyMaxChannelsPerProject {@code HISTORY_MAX_CHANNELS_PER_PROJECT} (1,000) channels with
 *     history per project
 * @param historyMaxBytesPerProject {@code HISTORY_MAX_BYTES_PER_PROJECT} (8 MiB) history per project
 * @param resumeBucketMaxBytes {@code RESUME_BUCKET_MAX_BYTES} (32 MiB), byte limit of the
 *     {@code aura_resume} bucket of postgres_changes resume records (docs/design.md R)
 * @param projectLimits per-project limits' defaults ({@link ProjectLimitsConfig})
 * @param connectionBounds timeouts of HTTP connections and fragmented WebSocket messages
 *     ({@link ConnectionBounds})
 */
public record FrontConfig(
        NatsSettings nats,
        String jwtSecret,
        JwtSettings jwt,
        int wsPort,
        int historySize,
        String instanceId,
        int ioThreads,
        int maxFrameBytes,
        Duration idleTimeout,
        int maxChannelsPerConnection,
        int maxJoinsPerSecond,
        int maxEventsPerSecond,
        int maxBroadcastPayloadBytes,
        int writeBufferLowBytes,
        int writeBufferHighBytes,
        long maxOutboundBytes,
        Duration slowClientTimeout,
        Duration maxQueueDelay,
        long maxQueueBytes,
        Duration subscriptionCheckTimeout,
        Duration subscriptionRefresh,
        Duration subscriptionTtl,
        Duration shutdownGrace,
        PresenceConfig presence,
        int historyMaxChannels,
        long historyMaxBytes,
        Duration historyTtl,
        Duration cdcStatusTimeout,
        Duration replicationReadyTimeout,
        Duration sseHeartbeat,
        long registryBucketMaxBytes,
        int dedupeWindowEvents,
        long dedupeWindowBytes,
        int maxBindingsPerJoin,
        int maxPresencePayloadBytes,
        int historyMaxChannelsPerProject,
        long historyMaxBytesPerProject,
        long resumeBucketMaxBytes,
        ProjectLimitsConfig projectLimits,
        ConnectionBounds connectionBounds) {

    public FrontConfig {
        if (writeBufferLowBytes > writeBufferHighBytes) {
            throw new ConfigException("WS_WRITE_BUFFER_LOW_BYTES=" + writeBufferLowBytes
                    + " must not exceed WS_WRITE_BUFFER_HIGH_BYTES=" + writeBufferHighBytes);
        }
        if (maxOutboundBytes < writeBufferHighBytes) {
            throw new ConfigException("WS_MAX_OUTBOUND_BYTES=" + maxOutboundBytes
                    + " must be at least WS_WRITE_BUFFER_HIGH_BYTES=" + writeBufferHighBytes);
        }
        if (subscriptionRefresh.compareTo(SubscriptionEntry.REFRESH_INTERVAL) > 0) {
            throw new ConfigException("SUBSCRIPTION_REFRESH_MS must be at most "
                    + SubscriptionEntry.REFRESH_INTERVAL.toMillis() + " ms: the registry bucket's max age ("
                    + subscriptionTtl.toMillis() + " ms or more) allows resume windows that long after the last"
                    + " refresh of a replica that died (docs/design.md R)");
        }
        if (cdcStatusTimeout.compareTo(CdcStatus.HEARTBEAT) <= 0) {
            throw new ConfigException("WS_CDC_STATUS_TIMEOUT_MS=" + cdcStatusTimeout.toMillis()
                    + " must be larger than the cdc-worker's status heartbeat (" + CdcStatus.HEARTBEAT.toMillis()
                    + " ms), else every healthy worker is reported silent between two heartbeats");
        }
    }

    /** Reads every variable; fails naming the first missing or malformed one. */
    public static FrontConfig load(Env env) {
        return new FrontConfig(
                NatsSettings.fromEnv(env),
                env.required(EnvVars.AURA_JWT_SECRET.name()),
                JwtSettings.fromEnv(env),
                env.integer(EnvVars.WS_PORT, 0, 65535),
                env.integer(EnvVars.HISTORY_SIZE, 0, 100_000),
                InstanceId.fromEnv(env, "ws-front"),
                env.integer(EnvVars.WS_IO_THREADS, 0, 1024),
                env.integer(EnvVars.WS_MAX_FRAME_BYTES, 1024, 64 * 1024 * 1024),
                env.millis(EnvVars.WS_IDLE_TIMEOUT_MS, 1_000, 3_600_000),
                env.integer(EnvVars.WS_MAX_CHANNELS_PER_CONNECTION, 1, 100_000),
                env.integer(EnvVars.WS_MAX_JOINS_PER_SECOND, 1, 1_000_000),
                env.integer(EnvVars.WS_MAX_EVENTS_PER_SECOND, 1, 1_000_000),
                env.integer(EnvVars.WS_MAX_BROADCAST_PAYLOAD_BYTES, 1, 64 * 1024 * 1024),
                env.integer(EnvVars.WS_WRITE_BUFFER_LOW_BYTES, 1024, Integer.MAX_VALUE),
                env.integer(EnvVars.WS_WRITE_BUFFER_HIGH_BYTES, 1024, Integer.MAX_VALUE),
                env.longValue(EnvVars.WS_MAX_OUTBOUND_BYTES, 1024, Long.MAX_VALUE),
                env.millis(EnvVars.WS_SLOW_CLIENT_TIMEOUT_MS, 10, 600_000),
                env.millis(EnvVars.WS_MAX_QUEUE_DELAY_MS, 10, 600_000),
                env.longValue(EnvVars.WS_MAX_QUEUE_BYTES, 1024, Long.MAX_VALUE),
                env.millis(EnvVars.SUBSCRIPTION_CHECK_TIMEOUT_MS, 10, 60_000),
                env.millis(EnvVars.SUBSCRIPTION_REFRESH_MS, 100, 3_600_000),
                SubscriptionEntry.MAX_AGE,
                env.seconds(EnvVars.WS_SHUTDOWN_GRACE_SECONDS, 0, 3600),
                PresenceConfig.load(env),
                env.integer(EnvVars.HISTORY_MAX_CHANNELS, 1, 10_000_000),
                env.longValue(EnvVars.HISTORY_MAX_BYTES, 1024, Long.MAX_VALUE),
                env.seconds(EnvVars.HISTORY_TTL_SECONDS, 1, 7 * 24 * 3600),
                env.millis(EnvVars.WS_CDC_STATUS_TIMEOUT_MS, 1_000, 3_600_000),
                env.millis(EnvVars.WS_REPLICATION_READY_TIMEOUT_MS, 100, 600_000),
                env.millis(EnvVars.SSE_HEARTBEAT_MS, 100, 3_600_000),
                env.longValue(EnvVars.REGISTRY_BUCKET_MAX_BYTES, 64 * 1024, Long.MAX_VALUE),
                env.integer(EnvVars.WS_DEDUPE_WINDOW_EVENTS, 0, 100_000_000),
                env.longValue(EnvVars.WS_DEDUPE_WINDOW_BYTES, 0, Long.MAX_VALUE),
                env.integer(EnvVars.WS_MAX_BINDINGS_PER_JOIN, 1, 100_000),
                env.integer(EnvVars.WS_MAX_PRESENCE_PAYLOAD_BYTES, 2, 64 * 1024 * 1024),
                env.integer(EnvVars.HISTORY_MAX_CHANNELS_PER_PROJECT, 1, 10_000_000),
                env.longValue(EnvVars.HISTORY_MAX_BYTES_PER_PROJECT, 1024, Long.MAX_VALUE),
                env.longValue(EnvVars.RESUME_BUCKET_MAX_BYTES, 64 * 1024, Long.MAX_VALUE),
                ProjectLimitsConfig.load(env),
                ConnectionBounds.load(env));
    }
}
