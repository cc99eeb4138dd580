package dev.aura.realtime.front.protocol;

/**
 * The closed set of error reasons ws-front sends, in Supabase Realtime's {@code "Code: message"}
 * wording where Supabase has one. Token errors come from {@code AuthException#reason()}.
 */
public final class Reasons {
    public static final String TOPIC_NAME_REQUIRED = "TopicNameRequired: You must provide a topic name";
    public static final String TOO_MANY_CHANNELS = "ChannelRateLimitReached: Too many channels";
    public static final String TOO_MANY_JOINS = "ClientJoinRateLimitReached: Too many joins per second";
    public static final String UNMATCHED_TOPIC = "unmatched topic";
    public static final String PROJECT_MISMATCH =
            "InvalidJWTToken: The access token belongs to another project than the API key";
    public static final String TOO_MANY_MESSAGES = "Too many messages per second";
    public static final String CDC_UNAVAILABLE = "Unable to validate subscription: CDC unavailable";
    public static final String REGISTRY_UNAVAILABLE =
            "Unable to register subscription: subscription registry unavailable";
    public static final String SUBSCRIBED = "Subscribed to PostgreSQL";
    /** {@code config.broadcast.replication_ready}: changes flow to this replica (realtime-js 2.119's words). */
    public static final String REPLICATION_READY = "Replication connection established";
    /** This replica lost its NATS link: changes committed meanwhile may never arrive. */
    public static final String RELAY_LINK_LOST =
            "RealtimeLinkLost: this server lost its connection to the event bus; changes may be missed until it is back";

    public static final String SERVER_DISCONNECT = "Server requested disconnect";
    public static final String PRESENCE_UNAVAILABLE = "PresenceUnavailable: presence is not enabled on this server";
    public static final String PRESENCE_NOT_A_MAP = "Presence track payload must be a map";
    public static final String PRESENCE_UNKNOWN_EVENT = "Presence event must be track or untrack";
    public static final String TOO_MANY_PRESENCE_MESSAGES = "Too many presence messages per second";
    /** Per project, across replicas (Supabase's codes and words). */
    public static final String TOO_MANY_USERS = "ConnectionRateLimitReached: Too many connected users";

    public static final String PROJECT_TOO_MANY_JOINS = "ClientJoinRateLimitReached: Too many joins per second";
    public static final String PROJECT_TOO_MANY_MESSAGES =
            "MessagePerSecondRateLimitReached: Too many messages per second";
    public static final String PROJECT_TOO_MANY_PRESENCE_MESSAGES =
            "ClientPresenceRateLimitReached: Too many presence messages per second";
    public static final String TOPIC_TOO_LONG =
            "TopicNameTooLong: A channel name may have at most " + Topics.MAX_NAME_BYTES + " bytes";

    /** {@code config.broadcast.replication_ready}: changes did not flow to this replica within the wait. */
    public static String replicationNotReady(long timeoutMs, String why) {
        return "ReplicationNotReady: Replication connection not established within " + timeoutMs + " ms (" + why + ")";
    }

    /** {@code postgres_changes_options.wait}: the join's postgres_changes did not flow within its timeout. */
    public static String subscribeTimeout(long waitMs) {
        return "PostgresChangesSubscribeTimeout: postgres_changes did not become active within " + waitMs + " ms";
    }

    /** A join with more postgres_changes bindings than the limit; none of them is checked or registered. */
    public static String tooManyBindings(int limit) {
        return "TooManyPostgresChangesBindings: A channel may have at most " + limit + " postgres_changes bindings";
    }

    /** A presence track payload over the limit; the previous state stays tracked. */
    public static String presencePayloadTooLarge(int limitBytes) {
        return "PayloadTooLarge: Presence payload exceeds the limit of " + limitBytes + " bytes";
    }

    /**
     * A join whose subscription checks (one per distinct postgres_changes binding, one for a
     * private channel) would exceed the project's checks per second, across replicas.
     */
    public static String tooManyChecks(int needed, int perSecond) {
        return "SubscriptionCheckRateLimitReached: Too many subscription checks per second (this join needs " + needed
                + "; the project allows " + perSecond + " per second)";
    }

    /** A join whose registry entries would put the project over its share of the registry bucket. */
    public static String registryQuotaExceeded(long shareBytes) {
        return "RegistryQuotaExceeded: This project's postgres_changes subscriptions would exceed its share of the"
                + " subscription registry (" + shareBytes + " bytes); leave channels or remove bindings first";
    }

    /** A track that would put the project over its share of the presence bucket; the previous state stays. */
    public static String presenceQuotaExceeded(long shareBytes) {
        return "PresenceQuotaExceeded: This project's tracked presences would exceed its share of the presence"
                + " store (" + shareBytes + " bytes); untrack or leave channels first";
    }

    private Reasons() {}

    /** Supabase's refusal of a postgres_changes binding it cannot serve. */
    public static String unableToSubscribe(String event, String schema, String table, String filter, String why) {
        return "Unable to subscribe to changes with given parameters. Please check Realtime is enabled for the given"
                + " connect parameters: [event: " + event + ", schema: " + schema + ", table: " + table
                + ", filters: [" + (filter == null ? "" : filter) + "]]" + (why == null ? "" : " (" + why + ")");
    }

    /** A payload nested deeper than the pipeline carries (docs/design.md C13). */
    public static final String PAYLOAD_TOO_DEEP = "PayloadTooLarge: Payload is nested deeper than "
            + dev.aura.realtime.common.wire.WireJson.MAX_VALUE_NESTING + " levels";

    /** Broadcast payload over the configured limit. */
    public static String payloadTooLarge(int limitBytes) {
        return "PayloadTooLarge: Payload size exceeds the limit of " + limitBytes + " bytes";
    }

    public static final String INVALID_REPLAY =
            "UnableToReplayMessages: config.broadcast.replay needs a numeric since (epoch ms) and a positive limit";

    /** The cdc-worker stopped sending its status heartbeat (killed, partitioned, or NATS is down). */
    public static String cdcSilent(long seconds) {
        return "CdcWorkerSilent: no status from the cdc-worker for " + seconds + " seconds";
    }

    /** Last-Event-ID (SSE) no longer in the channel's history. */
    public static final String HISTORY_GAP = "HistoryGap: Last-Event-ID is no longer in the channel's history";

    // private channels (docs/design.md H1)
    /** A public join of a project whose {@code private_only} is set. */
    public static final String PRIVATE_ONLY = "PrivateOnly: This project only allows private channels";

    /** A topic name with NUL, which private channel keys reserve. */
    public static final String TOPIC_NAME_INVALID = "TopicNameInvalid: topic names may not contain NUL";

    /** Supabase's refusal of a private join (and the close after a token refresh took the read away). */
    public static String cannotRead(String topic) {
        return "Unauthorized: You do not have permissions to read from this Channel topic: " + topic;
    }

    /** A broadcast, track or persisted message on a private channel the insert policy refused. */
    public static String cannotWrite(String topic) {
        return "Unauthorized: You do not have permissions to write to this Channel topic: " + topic;
    }

    /** {@code persist} on a public channel (realtime-js refuses it before sending). */
    public static final String PERSIST_NEEDS_PRIVATE = "Realtime send() cannot store a message on a public channel.";

    /** Too much waiting behind a private channel's first write check. */
    public static final String WRITE_CHECK_PENDING =
            "RealtimeRestricted: too many messages are waiting for this channel's write check, try again";

    /** A replay whose messages did not all fit one answer. */
    public static final String REPLAY_TRUNCATED =
            "UnableToReplayMessages: older messages were left out, the replay exceeded its size limit";

    /** A frame the codec could not read. */
    public static String malformed(String detail) {
        return "MalformedMessage: " + detail;
    }
}
