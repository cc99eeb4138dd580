package dev.aura.realtime.front.config;

import dev.aura.realtime.common.config.Setting;
import dev.aura.realtime.common.config.SharedSettings;
import dev.aura.realtime.common.wire.SubscriptionEntry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Every environment variable ws-front reads, declared once: name, type, unit, default, range and
 * doc ({@link Setting}); the per-project limits are in {@link ProjectLimitSettings}. The config
 * records ({@link FrontConfig}, {@link PresenceConfig}, {@link ProjectLimitsConfig},
 * {@link ConnectionBounds}) read them only through these declarations; docs/configuration.md's
 * ws-front table is generated from {@link #ALL} and the chart test checks the chart against it.
 */
public final class FrontSettings {
    private FrontSettings() {}

    private static final long MIB = 1024L * 1024;

    // The server and its connections.
    public static final Setting<Integer> WS_PORT = Setting.integer("WS_PORT", "port", 4000)
            .range(0, 65535)
            .doc("WebSocket, SSE, health and metrics port (0: a free port)");
    public static final Setting<Integer> WS_IO_THREADS = Setting.integer("WS_IO_THREADS", "threads", 0)
            .range(0, 1024)
            .doc("Netty event loop threads (0 = 2 x cores)");
    public static final Setting<Integer> WS_MAX_FRAME_BYTES = Setting.integer("WS_MAX_FRAME_BYTES", "bytes", 5_000_000)
            .range(1024, 64 * 1024 * 1024)
            .doc("Largest WebSocket message accepted (Supabase: 5,000,000)");
    public static final Setting<Duration> WS_IDLE_TIMEOUT_MS = Setting.millis("WS_IDLE_TIMEOUT_MS", 60_000)
            .range(1_000, 3_600_000)
            .doc("A socket with no inbound frame for this long is closed (clients heartbeat every 25 s)");
    public static final Setting<Duration> WS_FRAGMENT_TIMEOUT_MS = Setting.millis("WS_FRAGMENT_TIMEOUT_MS", 10_000)
            .range(10, 3_600_000)
            .doc("A fragmented WebSocket message not completed within this is closed with 1008");
    public static final Setting<Duration> HTTP_KEEP_ALIVE_TIMEOUT_MS = Setting.millis(
                    "HTTP_KEEP_ALIVE_TIMEOUT_MS", 75_000)
            .range(10, 3_600_000)
            .doc("A keep-alive HTTP connection whose next request head is not complete this long after a response is"
                    + " closed");
    public static final Setting<Duration> HTTP_BODY_TIMEOUT_MS = Setting.millis("HTTP_BODY_TIMEOUT_MS", 10_000)
            .range(10, 3_600_000)
            .doc("A request body not complete this long after its head is answered 408 and closed");
    public static final Setting<Duration> SSE_HEARTBEAT_MS =
            Setting.millis("SSE_HEARTBEAT_MS", 15_000).range(100, 3_600_000).doc("Interval of SSE keep-alive comments");
    public static final Setting<Duration> WS_SHUTDOWN_GRACE_SECONDS = Setting.seconds("WS_SHUTDOWN_GRACE_SECONDS", 20)
            .range(0, 3600)
            .doc("On SIGTERM: time between 'Server requested disconnect' and closing the remaining sockets");

    // Per connection.
    public static final Setting<Integer> WS_MAX_CHANNELS_PER_CONNECTION = Setting.integer(
                    "WS_MAX_CHANNELS_PER_CONNECTION", "channels", 100)
            .range(1, 100_000)
            .doc("Joined channels per connection (ChannelRateLimitReached)");
    public static final Setting<Integer> WS_MAX_JOINS_PER_SECOND = Setting.integer(
                    "WS_MAX_JOINS_PER_SECOND", "joins/s", 100)
            .range(1, 1_000_000)
            .doc("Joins per second per connection (ClientJoinRateLimitReached)");
    public static final Setting<Integer> WS_MAX_EVENTS_PER_SECOND = Setting.integer(
                    "WS_MAX_EVENTS_PER_SECOND", "events/s", 100)
            .range(1, 1_000_000)
            .doc("Client broadcast/presence events per second per connection");
    public static final Setting<Integer> WS_MAX_BROADCAST_PAYLOAD_BYTES = Setting.integer(
                    "WS_MAX_BROADCAST_PAYLOAD_BYTES", "bytes", 3_072_000)
            .range(1, 64 * 1024 * 1024)
            .doc("Largest broadcast payload, default for every project (Supabase: 3,000 KB; free plan 256 KB)");
    public static final Setting<Integer> WS_MAX_PRESENCE_EVENTS_PER_SECOND = Setting.integer(
                    "WS_MAX_PRESENCE_EVENTS_PER_SECOND", "events/s", 10)
            .range(1, 1_000_000)
            .doc("Presence track/untrack per second per connection");
    public static final Setting<Integer> WS_MAX_BINDINGS_PER_JOIN = Setting.integer(
                    "WS_MAX_BINDINGS_PER_JOIN", "bindings", 100)
            .range(1, 100_000)
            .doc("postgres_changes bindings in one join (each is a registry entry and a database check)");
    public static final Setting<Integer> WS_MAX_PRESENCE_PAYLOAD_BYTES = Setting.integer(
                    "WS_MAX_PRESENCE_PAYLOAD_BYTES", "bytes", 10_240)
            .range(2, 64 * 1024 * 1024)
            .doc("Largest presence track payload (the state of one presence key, sent to every member)");

    // Slow clients and overload.
    public static final Setting<Integer> WS_WRITE_BUFFER_LOW_BYTES = Setting.integer(
                    "WS_WRITE_BUFFER_LOW_BYTES", "bytes", 256 * 1024)
            .range(1024, Integer.MAX_VALUE)
            .doc("Outbound buffer low water mark (writable again below); at most WS_WRITE_BUFFER_HIGH_BYTES");
    public static final Setting<Integer> WS_WRITE_BUFFER_HIGH_BYTES = Setting.integer(
                    "WS_WRITE_BUFFER_HIGH_BYTES", "bytes", 1024 * 1024)
            .range(1024, Integer.MAX_VALUE)
            .doc("Outbound buffer high water mark (unwritable above)");
    public static final Setting<Long> WS_MAX_OUTBOUND_BYTES = Setting.bytes("WS_MAX_OUTBOUND_BYTES", 8 * MIB)
            .range(1024, Long.MAX_VALUE)
            .doc("Queued outbound bytes that disconnect a client at once; at least WS_WRITE_BUFFER_HIGH_BYTES");
    public static final Setting<Duration> WS_SLOW_CLIENT_TIMEOUT_MS = Setting.millis(
                    "WS_SLOW_CLIENT_TIMEOUT_MS", 10_000)
            .range(10, 600_000)
            .doc("Time a client may stay unwritable before it is disconnected");
    public static final Setting<Duration> WS_MAX_QUEUE_DELAY_MS = Setting.millis("WS_MAX_QUEUE_DELAY_MS", 5000)
            .range(10, 600_000)
            .doc("Longest a message waits in an event loop's queue; its recipients are disconnected instead"
                    + " (overload)");
    public static final Setting<Long> WS_MAX_QUEUE_BYTES = Setting.bytes("WS_MAX_QUEUE_BYTES", 256 * MIB)
            .range(1024, Long.MAX_VALUE)
            .doc("Bytes queued per event loop; a message that does not fit disconnects its recipients (overload)");

    // Broadcast history.
    public static final Setting<Integer> HISTORY_SIZE = Setting.integer("HISTORY_SIZE", "messages", 100)
            .range(0, 100_000)
            .doc("Per-channel broadcast history ring");
    public static final Setting<Integer> HISTORY_MAX_CHANNELS = Setting.integer(
                    "HISTORY_MAX_CHANNELS", "channels", 10_000)
            .range(1, 10_000_000)
            .doc("Channels whose broadcast history is kept (stalest dropped first)");
    public static final Setting<Long> HISTORY_MAX_BYTES = Setting.bytes("HISTORY_MAX_BYTES", 64 * MIB)
            .range(1024, Long.MAX_VALUE)
            .doc("Broadcast history memory in all (stalest channels dropped first)");
    public static final Setting<Integer> HISTORY_MAX_CHANNELS_PER_PROJECT = Setting.integer(
                    "HISTORY_MAX_CHANNELS_PER_PROJECT", "channels", 1000)
            .range(1, 10_000_000)
            .doc("Channels with broadcast history per project (the project's stalest dropped first)");
    public static final Setting<Long> HISTORY_MAX_BYTES_PER_PROJECT = Setting.bytes(
                    "HISTORY_MAX_BYTES_PER_PROJECT", 8 * MIB)
            .range(1024, Long.MAX_VALUE)
            .doc("Broadcast history memory per project (the project's stalest channels dropped first)");
    public static final Setting<Duration> HISTORY_TTL_SECONDS = Setting.seconds("HISTORY_TTL_SECONDS", 600)
            .range(1, 7 * 24 * 3600)
            .doc("A channel's history is dropped after this long without a new broadcast");

    // postgres_changes: the cdc-worker's status, checks, the registry, duplicates, resume.
    public static final Setting<Duration> WS_CDC_STATUS_TIMEOUT_MS = Setting.millis("WS_CDC_STATUS_TIMEOUT_MS", 15_000)
            .range(1_000, 3_600_000)
            .doc("No cdc-worker status heartbeat (every 5 s) for this long: postgres_changes subscribers get a system"
                    + " error; must exceed 5000");
    public static final Setting<Duration> WS_REPLICATION_READY_TIMEOUT_MS = Setting.millis(
                    "WS_REPLICATION_READY_TIMEOUT_MS", 15_000)
            .range(100, 600_000)
            .doc("A join with config.broadcast.replication_ready waits this long for changes to flow (an active"
                    + " cdc-worker's fresh status) before its system error");
    public static final Setting<Duration> SUBSCRIPTION_CHECK_TIMEOUT_MS = Setting.millis(
                    "SUBSCRIPTION_CHECK_TIMEOUT_MS", 2000)
            .range(10, 60_000)
            .doc("Wait for a cdc-worker to validate a postgres_changes binding at join");
    public static final Setting<Duration> PROJECT_KEYS_CACHE_SECONDS = Setting.seconds("PROJECT_KEYS_CACHE_SECONDS", 30)
            .range(1, 3600)
            .doc("How long an answer about a project's API key or token issuer is used before a cdc-worker is asked"
                    + " again: a revoked key or changed issuer takes effect within it, a revoked key's open sockets"
                    + " close within twice it (docs/security.md)");
    public static final Setting<Duration> PROJECT_KEYS_TIMEOUT_MS = Setting.millis("PROJECT_KEYS_TIMEOUT_MS", 3000)
            .range(100, 60_000)
            .doc("Wait for a cdc-worker's answer about a project's API key or token issuer (then 503 'try again', or"
                    + " the last answer found); longer than the cdc-worker's PROJECT_JWKS_TIMEOUT_MS");
    public static final Setting<Duration> SUBSCRIPTION_REFRESH_MS = Setting.millis("SUBSCRIPTION_REFRESH_MS", 30_000)
            .range(100, SubscriptionEntry.REFRESH_INTERVAL.toMillis())
            .doc("Re-put interval of registry entries (the bucket's max age is at least 120 s, the longest resume"
                    + " window + 40 s, which holds a dead replica's entries for the window after its last refresh)");
    public static final Setting<Integer> WS_DEDUPE_WINDOW_EVENTS = Setting.integer(
                    "WS_DEDUPE_WINDOW_EVENTS", "events", 100_000)
            .range(0, 100_000_000)
            .doc("Change event ids remembered to drop re-published duplicates (Aura-Event-Id)");
    public static final Setting<Long> WS_DEDUPE_WINDOW_BYTES =
            Setting.bytes("WS_DEDUPE_WINDOW_BYTES", 16 * MIB).doc("Memory bound of the remembered change event ids");
    public static final Setting<Long> RESUME_BUCKET_MAX_BYTES = Setting.bytes("RESUME_BUCKET_MAX_BYTES", 32 * MIB)
            .range(64 * 1024, Long.MAX_VALUE)
            .doc(
                    "Byte limit of the aura_resume KV bucket (resume records of postgres_changes channels); each project may"
                            + " hold 1/40 of it (project_limits.max_resume_bytes overrides)");

    // Presence.
    public static final Setting<Duration> PRESENCE_MAX_AGE_MS = Setting.millis("PRESENCE_MAX_AGE_MS", 60_000)
            .range(1_000, 86_400_000)
            .doc("Max age of the aura_presence KV bucket (set when it is created); live presences are re-put every"
                    + " quarter of it");
    public static final Setting<Duration> PRESENCE_RECONCILE_MS = Setting.millis("PRESENCE_RECONCILE_MS", 5000)
            .range(100, 3_600_000)
            .doc("Interval of the presence reconciliation (expired keys of crashed replicas become leaves); shorter"
                    + " than PRESENCE_MAX_AGE_MS");
    public static final Setting<Long> PRESENCE_BUCKET_MAX_BYTES = Setting.bytes("PRESENCE_BUCKET_MAX_BYTES", 64 * MIB)
            .range(64 * 1024, Long.MAX_VALUE)
            .doc("Byte limit of the aura_presence KV bucket");

    /** ws-front's own settings but the per-project limits, in the order of docs/configuration.md. */
    private static final List<Setting<?>> OWN = List.of(
            WS_PORT,
            WS_IO_THREADS,
            WS_MAX_FRAME_BYTES,
            WS_IDLE_TIMEOUT_MS,
            WS_FRAGMENT_TIMEOUT_MS,
            HTTP_KEEP_ALIVE_TIMEOUT_MS,
            HTTP_BODY_TIMEOUT_MS,
            SSE_HEARTBEAT_MS,
            WS_SHUTDOWN_GRACE_SECONDS,
            WS_MAX_CHANNELS_PER_CONNECTION,
            WS_MAX_JOINS_PER_SECOND,
            WS_MAX_EVENTS_PER_SECOND,
            WS_MAX_BROADCAST_PAYLOAD_BYTES,
            WS_MAX_PRESENCE_EVENTS_PER_SECOND,
            WS_MAX_BINDINGS_PER_JOIN,
            WS_MAX_PRESENCE_PAYLOAD_BYTES,
            WS_WRITE_BUFFER_LOW_BYTES,
            WS_WRITE_BUFFER_HIGH_BYTES,
            WS_MAX_OUTBOUND_BYTES,
            WS_SLOW_CLIENT_TIMEOUT_MS,
            WS_MAX_QUEUE_DELAY_MS,
            WS_MAX_QUEUE_BYTES,
            HISTORY_SIZE,
            HISTORY_MAX_CHANNELS,
            HISTORY_MAX_BYTES,
            HISTORY_MAX_CHANNELS_PER_PROJECT,
            HISTORY_MAX_BYTES_PER_PROJECT,
            HISTORY_TTL_SECONDS,
            WS_CDC_STATUS_TIMEOUT_MS,
            WS_REPLICATION_READY_TIMEOUT_MS,
            SUBSCRIPTION_CHECK_TIMEOUT_MS,
            PROJECT_KEYS_CACHE_SECONDS,
            PROJECT_KEYS_TIMEOUT_MS,
            SUBSCRIPTION_REFRESH_MS,
            WS_DEDUPE_WINDOW_EVENTS,
            WS_DEDUPE_WINDOW_BYTES,
            RESUME_BUCKET_MAX_BYTES,
            PRESENCE_MAX_AGE_MS,
            PRESENCE_RECONCILE_MS,
            PRESENCE_BUCKET_MAX_BYTES);

    /**
     * Every variable ws-front reads: its own, the per-project limits, then those both binaries
     * read ({@link SharedSettings}).
     */
    public static final List<Setting<?>> ALL = concat(OWN, ProjectLimitSettings.ALL, SharedSettings.ALL);

    @SafeVarargs
    private static List<Setting<?>> concat(List<Setting<?>>... lists) {
        List<Setting<?>> all = new ArrayList<>();
        for (List<Setting<?>> list : lists) {
            all.addAll(list);
        }
        return List.copyOf(all);
    }
}
