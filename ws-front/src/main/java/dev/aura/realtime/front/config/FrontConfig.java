package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.ConfigException;
import dev.aura.realtime.common.config.Env;
import dev.aura.realtime.common.config.InstanceId;
import dev.aura.realtime.common.config.JwtSettings;
import dev.aura.realtime.common.config.NatsSettings;
import dev.aura.realtime.common.config.SharedSettings;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.time.Duration;

/**
 * The whole ws-front configuration, read once at start-up from environment variables. Invalid
 * values and invalid combinations throw {@link ConfigException} naming the variable. Each
 * variable's default, unit and range are declared once, in {@link FrontSettings}.
 *
 * @param nats {@code NATS_URL}, credentials and TLS ({@code NATS_*})
 * @param jwtSecret {@code AURA_JWT_SECRET} (required), HS256 secret of client tokens
 * @param jwt the signing keys of client tokens ({@code AURA_JWT_*}, {@link JwtSettings})
 * @param wsPort {@code WS_PORT}, the one HTTP/WebSocket port; 0 picks a free port
 * @param historySize {@code HISTORY_SIZE}, broadcast history ring per channel
 * @param instanceId {@code INSTANCE_ID}, else {@code POD_NAME}, else hostname-random ({@link InstanceId})
 * @param ioThreads {@code WS_IO_THREADS}, event loop threads
 * @param maxFrameBytes {@code WS_MAX_FRAME_BYTES}, largest WebSocket message
 * @param idleTimeout {@code WS_IDLE_TIMEOUT_MS} without any inbound frame closes a socket
 * @param maxChannelsPerConnection {@code WS_MAX_CHANNELS_PER_CONNECTION}
 * @param maxJoinsPerSecond {@code WS_MAX_JOINS_PER_SECOND}
 * @param maxEventsPerSecond {@code WS_MAX_EVENTS_PER_SECOND}
 * @param maxBroadcastPayloadBytes {@code WS_MAX_BROADCAST_PAYLOAD_BYTES}, default per project
 * @param writeBufferLowBytes {@code WS_WRITE_BUFFER_LOW_BYTES}, writable again below
 * @param writeBufferHighBytes {@code WS_WRITE_BUFFER_HIGH_BYTES}, unwritable above
 * @param maxOutboundBytes {@code WS_MAX_OUTBOUND_BYTES}, queued bytes that disconnect at once
 * @param slowClientTimeout {@code WS_SLOW_CLIENT_TIMEOUT_MS} unwritable before disconnect
 * @param maxQueueDelay {@code WS_MAX_QUEUE_DELAY_MS} a message may wait in an event loop's
 *     queue before its recipients are disconnected instead
 * @param maxQueueBytes {@code WS_MAX_QUEUE_BYTES} queued per event loop before a message's
 *     recipients are disconnected instead
 * @param subscriptionCheckTimeout {@code SUBSCRIPTION_CHECK_TIMEOUT_MS} for the cdc-worker's answer
 * @param subscriptionRefresh {@code SUBSCRIPTION_REFRESH_MS} between re-puts of registry entries
 * @param subscriptionTtl max age of the KV bucket, fixed by the wire contract ({@code SubscriptionEntry.MAX_AGE}, 120 s)
 * @param shutdownGrace {@code WS_SHUTDOWN_GRACE_SECONDS} between "Server requested disconnect" and forced close
 * @param presence presence settings ({@link PresenceConfig})
 * @param historyMaxChannels {@code HISTORY_MAX_CHANNELS} channels with broadcast history
 * @param historyMaxBytes {@code HISTORY_MAX_BYTES} broadcast history in all
 * @param historyTtl {@code HISTORY_TTL_SECONDS} without a broadcast drops a channel's history
 * @param cdcStatusTimeout {@code WS_CDC_STATUS_TIMEOUT_MS} of cdc-worker silence reported as CDC
 *     down; must exceed the status heartbeat ({@link CdcStatus#HEARTBEAT}, 5 s)
 * @param replicationReadyTimeout {@code WS_REPLICATION_READY_TIMEOUT_MS} a join with
 *     {@code config.broadcast.replication_ready} waits for changes to flow before it is told they do not
 * @param sseHeartbeat {@code SSE_HEARTBEAT_MS} between SSE keep-alive comments
 * @param registryBucketMaxBytes {@code REGISTRY_BUCKET_MAX_BYTES}, byte limit of the
 *     registry bucket when this replica creates it or finds it different
 * @param dedupeWindowEvents {@code WS_DEDUPE_WINDOW_EVENTS} change event ids remembered
 *     to drop re-published duplicates
 * @param dedupeWindowBytes {@code WS_DEDUPE_WINDOW_BYTES} memory bound of those ids
 * @param maxBindingsPerJoin {@code WS_MAX_BINDINGS_PER_JOIN} postgres_changes bindings in one join
 * @param maxPresencePayloadBytes {@code WS_MAX_PRESENCE_PAYLOAD_BYTES} of one track payload
 * @param historyMaxChannelsPerProject {@code HISTORY_MAX_CHANNELS_PER_PROJECT} channels with
 *     history per project
 * @param historyMaxBytesPerProject {@code HISTORY_MAX_BYTES_PER_PROJECT} history per project
 * @param resumeBucketMaxBytes {@code RESUME_BUCKET_MAX_BYTES}, byte limit of the
 *     {@code aura_resume} bucket of postgres_changes resume records (docs/design.md R)
 * @param projectLimits per-project limits' defaults ({@link ProjectLimitsConfig})
 * @param connectionBounds timeouts of HTTP connections and fragmented WebSocket messages
 *     ({@link ConnectionBounds})
 * @param projectKeysCache {@code PROJECT_KEYS_CACHE_SECONDS}: answers about projects' API keys and
 *     token issuers are used this long (docs/security.md "Each project's own keys")
 * @param projectKeysTimeout {@code PROJECT_KEYS_TIMEOUT_MS} for a cdc-worker's answer about them
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
        ConnectionBounds connectionBounds,
        Duration projectKeysCache,
        Duration projectKeysTimeout) {

    public FrontConfig {
        String low = FrontSettings.WS_WRITE_BUFFER_LOW_BYTES.name();
        String high = FrontSettings.WS_WRITE_BUFFER_HIGH_BYTES.name();
        if (writeBufferLowBytes > writeBufferHighBytes) {
            throw new ConfigException(
                    low + "=" + writeBufferLowBytes + " must not exceed " + high + "=" + writeBufferHighBytes);
        }
        if (maxOutboundBytes < writeBufferHighBytes) {
            throw new ConfigException(FrontSettings.WS_MAX_OUTBOUND_BYTES.name() + "=" + maxOutboundBytes
                    + " must be at least " + high + "=" + writeBufferHighBytes);
        }
        if (subscriptionRefresh.compareTo(SubscriptionEntry.REFRESH_INTERVAL) > 0) {
            throw new ConfigException(FrontSettings.SUBSCRIPTION_REFRESH_MS.name() + " must be at most "
                    + SubscriptionEntry.REFRESH_INTERVAL.toMillis() + " ms: the registry bucket's max age ("
                    + subscriptionTtl.toMillis() + " ms or more) allows resume windows that long after the last"
                    + " refresh of a replica that died (docs/design.md R)");
        }
        if (cdcStatusTimeout.compareTo(CdcStatus.HEARTBEAT) <= 0) {
            throw new ConfigException(FrontSettings.WS_CDC_STATUS_TIMEOUT_MS.name() + "=" + cdcStatusTimeout.toMillis()
                    + " must be larger than the cdc-worker's status heartbeat (" + CdcStatus.HEARTBEAT.toMillis()
                    + " ms), else every healthy worker is reported silent between two heartbeats");
        }
    }

    /** Reads every variable; fails naming the first missing or malformed one. */
    public static FrontConfig load(Env env) {
        return new FrontConfig(
                NatsSettings.fromEnv(env),
                SharedSettings.AURA_JWT_SECRET.read(env),
                JwtSettings.fromEnv(env),
                FrontSettings.WS_PORT.read(env),
                FrontSettings.HISTORY_SIZE.read(env),
                InstanceId.fromEnv(env, "ws-front"),
                FrontSettings.WS_IO_THREADS.read(env),
                FrontSettings.WS_MAX_FRAME_BYTES.read(env),
                FrontSettings.WS_IDLE_TIMEOUT_MS.read(env),
                FrontSettings.WS_MAX_CHANNELS_PER_CONNECTION.read(env),
                FrontSettings.WS_MAX_JOINS_PER_SECOND.read(env),
                FrontSettings.WS_MAX_EVENTS_PER_SECOND.read(env),
                FrontSettings.WS_MAX_BROADCAST_PAYLOAD_BYTES.read(env),
                FrontSettings.WS_WRITE_BUFFER_LOW_BYTES.read(env),
                FrontSettings.WS_WRITE_BUFFER_HIGH_BYTES.read(env),
                FrontSettings.WS_MAX_OUTBOUND_BYTES.read(env),
                FrontSettings.WS_SLOW_CLIENT_TIMEOUT_MS.read(env),
                FrontSettings.WS_MAX_QUEUE_DELAY_MS.read(env),
                FrontSettings.WS_MAX_QUEUE_BYTES.read(env),
                FrontSettings.SUBSCRIPTION_CHECK_TIMEOUT_MS.read(env),
                FrontSettings.SUBSCRIPTION_REFRESH_MS.read(env),
                SubscriptionEntry.MAX_AGE,
                FrontSettings.WS_SHUTDOWN_GRACE_SECONDS.read(env),
                PresenceConfig.load(env),
                FrontSettings.HISTORY_MAX_CHANNELS.read(env),
                FrontSettings.HISTORY_MAX_BYTES.read(env),
                FrontSettings.HISTORY_TTL_SECONDS.read(env),
                FrontSettings.WS_CDC_STATUS_TIMEOUT_MS.read(env),
                FrontSettings.WS_REPLICATION_READY_TIMEOUT_MS.read(env),
                FrontSettings.SSE_HEARTBEAT_MS.read(env),
                SharedSettings.REGISTRY_BUCKET_MAX_BYTES.read(env),
                FrontSettings.WS_DEDUPE_WINDOW_EVENTS.read(env),
                FrontSettings.WS_DEDUPE_WINDOW_BYTES.read(env),
                FrontSettings.WS_MAX_BINDINGS_PER_JOIN.read(env),
                FrontSettings.WS_MAX_PRESENCE_PAYLOAD_BYTES.read(env),
                FrontSettings.HISTORY_MAX_CHANNELS_PER_PROJECT.read(env),
                FrontSettings.HISTORY_MAX_BYTES_PER_PROJECT.read(env),
                FrontSettings.RESUME_BUCKET_MAX_BYTES.read(env),
                ProjectLimitsConfig.load(env),
                ConnectionBounds.load(env),
                FrontSettings.PROJECT_KEYS_CACHE_SECONDS.read(env),
                FrontSettings.PROJECT_KEYS_TIMEOUT_MS.read(env));
    }
}
