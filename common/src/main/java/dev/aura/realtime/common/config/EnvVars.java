package dev.aura.realtime.common.config;

import java.util.List;

/**
 * Every environment variable each binary reads, with default and unit. Binaries read their
 * configuration only through these names; the chart test checks the rendered manifests against
 * them; docs/configuration.md is written from them.
 */
public final class EnvVars {
    private EnvVars() {}

    // Shared by both binaries.
    public static final EnvVar NATS_URL =
            new EnvVar("NATS_URL", "nats://127.0.0.1:4222", "", "NATS server URL(s), comma-separated");
    public static final EnvVar NATS_USER =
            new EnvVar("NATS_USER", "(unset)", "", "NATS user name (user/password authentication, with NATS_PASSWORD)");
    public static final EnvVar NATS_PASSWORD =
            new EnvVar("NATS_PASSWORD", "(unset)", "", "NATS password of NATS_USER; never logged");
    public static final EnvVar NATS_NKEY_SEED_FILE = new EnvVar(
            "NATS_NKEY_SEED_FILE", "(unset)", "", "File holding an nkey user seed (SU...): nkey authentication");
    public static final EnvVar NATS_CREDS_FILE = new EnvVar(
            "NATS_CREDS_FILE",
            "(unset)",
            "",
            "NATS credentials file (user JWT + nkey seed): decentralised JWT authentication");
    public static final EnvVar NATS_TLS_CA_FILE = new EnvVar(
            "NATS_TLS_CA_FILE",
            "(unset)",
            "",
            "PEM file of the CA(s) that signed the NATS server certificate; turns TLS on (tls:// URLs without it trust the JVM's CAs)");
    public static final EnvVar NATS_TLS_CERT_FILE = new EnvVar(
            "NATS_TLS_CERT_FILE",
            "(unset)",
            "",
            "PEM client certificate (chain) for NATS servers that verify clients; with NATS_TLS_KEY_FILE");
    public static final EnvVar NATS_TLS_KEY_FILE =
            new EnvVar("NATS_TLS_KEY_FILE", "(unset)", "", "PEM (PKCS#8) private key of NATS_TLS_CERT_FILE");
    public static final EnvVar REGISTRY_BUCKET_MAX_BYTES = new EnvVar(
            "REGISTRY_BUCKET_MAX_BYTES",
            "67108864",
            "bytes",
            "Byte limit of the aura_subscriptions KV bucket, applied by whichever binary creates it or finds it different (keep equal in both)");
    public static final EnvVar AURA_JWT_SECRET = new EnvVar(
            "AURA_JWT_SECRET",
            null,
            "",
            "Legacy HS256 secret of client JWTs (at least 32 bytes); required (the cdc-worker also derives the"
                    + " project logins' passwords from it)");
    public static final EnvVar AURA_JWT_ACCEPT_HS256 = new EnvVar(
            "AURA_JWT_ACCEPT_HS256",
            "true",
            "",
            "Accept HS256 tokens signed with AURA_JWT_SECRET (false: only the asymmetric keys of AURA_JWT_JWKS*)");
    public static final EnvVar AURA_JWT_JWKS = new EnvVar(
            "AURA_JWT_JWKS",
            "(unset)",
            "",
            "Inline JWKS JSON ({\"keys\":[...]}) of the public keys that sign client JWTs: EC P-256 (ES256), RSA >= 2048"
                    + " bits (RS256), OKP Ed25519 (EdDSA), chosen by kid");
    public static final EnvVar AURA_JWT_JWKS_FILE = new EnvVar(
            "AURA_JWT_JWKS_FILE",
            "(unset)",
            "",
            "File holding a JWKS like AURA_JWT_JWKS (e.g. a mounted Secret); re-read when it changes (checked at most"
                    + " once a second)");
    public static final EnvVar AURA_JWT_JWKS_URL = new EnvVar(
            "AURA_JWT_JWKS_URL",
            "(unset)",
            "",
            "http(s) URL of a JWKS (e.g. https://<project>.supabase.co/auth/v1/.well-known/jwks.json), cached and"
                    + " refreshed");
    public static final EnvVar AURA_JWT_JWKS_CACHE_SECONDS = new EnvVar(
            "AURA_JWT_JWKS_CACHE_SECONDS",
            "300",
            "s",
            "How long a JWKS fetched from AURA_JWT_JWKS_URL is used before it is fetched again");
    public static final EnvVar AURA_JWT_JWKS_MIN_REFRESH_SECONDS = new EnvVar(
            "AURA_JWT_JWKS_MIN_REFRESH_SECONDS",
            "30",
            "s",
            "Rate limit of AURA_JWT_JWKS_URL fetches: tokens with an unknown kid cause at most two fetches per"
                    + " interval");
    public static final EnvVar INSTANCE_ID = new EnvVar(
            "INSTANCE_ID", "POD_NAME, else hostname-random", "", "Instance id used in Aura-Origin and lease identity");
    public static final EnvVar POD_NAME =
            new EnvVar("POD_NAME", "(unset)", "", "Pod name from the downward API (identity in Kubernetes)");
    public static final EnvVar POD_NAMESPACE =
            new EnvVar("POD_NAMESPACE", "(unset)", "", "Pod namespace from the downward API");

    // cdc-worker.
    public static final EnvVar POSTGRES_REPLICATION_URL = new EnvVar(
            "POSTGRES_REPLICATION_URL", null, "", "JDBC URL of a role with REPLICATION (slot polling); required");
    public static final EnvVar POSTGRES_URL = new EnvVar(
            "POSTGRES_URL",
            "POSTGRES_REPLICATION_URL",
            "",
            "JDBC URL of the worker's platform login (aura_platform, catalogs, control API); never runs tenant SQL");
    public static final EnvVar POSTGRES_TENANT_URL = new EnvVar(
            "POSTGRES_TENANT_URL",
            "(unset: the worker provisions login <CDC_SLOT_NAME>_tenant)",
            "",
            "JDBC URL with the credentials of the unprivileged login that runs the checks of tenant SQL (through"
                    + " each project's runner); its host and database also serve the project logins;"
                    + " see docs/security.md");
    public static final EnvVar CDC_TENANT_STATEMENT_TIMEOUT_MS = new EnvVar(
            "CDC_TENANT_STATEMENT_TIMEOUT_MS",
            "250",
            "ms",
            "statement_timeout of tenant SQL in the shards; a project whose check takes longer goes to its late lane"
                    + " (docs/design.md C14)");
    public static final EnvVar CDC_TENANT_LOCK_TIMEOUT_MS = new EnvVar(
            "CDC_TENANT_LOCK_TIMEOUT_MS",
            "100",
            "ms",
            "lock_timeout of tenant SQL (a tenant's lock cannot hold a check)");
    public static final EnvVar CDC_HTTP_PORT =
            new EnvVar("CDC_HTTP_PORT", "8081", "port", "Health, metrics and control API port");
    public static final EnvVar CDC_SLOT_NAME =
            new EnvVar("CDC_SLOT_NAME", "aura_cdc_slot", "", "Logical replication slot name (plugin wal2json)");
    public static final EnvVar CDC_SOURCE = new EnvVar(
            "CDC_SOURCE",
            "stream",
            "",
            "How the slot is read: stream (logical replication protocol, each WAL record decoded once) | poll (SQL "
                    + "interface, pg_logical_slot_peek_changes); docs/design.md C12");
    public static final EnvVar CDC_BUFFER_BYTES = new EnvVar(
            "CDC_BUFFER_BYTES",
            "67108864",
            "bytes",
            "Heap for changes between the slot and NATS's confirmation (shard queues, the poll fetch, unconfirmed publishes)");
    public static final EnvVar CDC_BATCH_SIZE = new EnvVar(
            "CDC_BATCH_SIZE",
            "1000",
            "changes",
            "upto_nchanges of each peek (checked at commit boundaries; poll source)");
    public static final EnvVar CDC_FETCH_SIZE = new EnvVar(
            "CDC_FETCH_SIZE",
            "500",
            "rows",
            "JDBC fetch size while streaming a peek result (poll source; at most CDC_BUFFER_BYTES / 4 of 64 KiB rows)");
    public static final EnvVar CDC_IDLE_BACKOFF_MS =
            new EnvVar("CDC_IDLE_BACKOFF_MS", "100", "ms", "Sleep after an empty poll (poll source)");
    public static final EnvVar CDC_TABLE_REFRESH_MS = new EnvVar(
            "CDC_TABLE_REFRESH_MS",
            "3000",
            "ms",
            "Refresh period of the cached enabled-table list; the slot readers no longer use it (they read the list fresh every round)");
    public static final EnvVar CDC_NUM_SHARDS =
            new EnvVar("CDC_NUM_SHARDS", "4", "count", "RLS worker shards (routed by project id)");
    public static final EnvVar CDC_MAX_RECORD_BYTES = new EnvVar(
            "CDC_MAX_RECORD_BYTES",
            "1048576",
            "bytes",
            "Record size above which values over 64 bytes are dropped (Error 413)");
    public static final EnvVar CDC_REDECODE_WARN_BYTES = new EnvVar(
            "CDC_REDECODE_WARN_BYTES",
            "268435456",
            "bytes",
            "Warn when restart_lsn lags confirmed_flush_lsn by more (a long-open transaction)");
    public static final EnvVar CDC_MESSAGES_RETENTION_HOURS = new EnvVar(
            "CDC_MESSAGES_RETENTION_HOURS",
            "72",
            "h",
            "How long rows of the projects' realtime messages tables are kept (Broadcast from Database, persisted"
                    + " messages, replay; Supabase: 72); keep equal on every replica");
    public static final EnvVar CDC_MESSAGES_JANITOR_MS = new EnvVar(
            "CDC_MESSAGES_JANITOR_MS",
            "600000",
            "ms",
            "Period of the leader's janitor deleting messages older than CDC_MESSAGES_RETENTION_HOURS or past their persist ttl (expires_at)");
    public static final EnvVar LEADER_ELECTION =
            new EnvVar("LEADER_ELECTION", "auto", "", "auto | kubernetes | disabled");
    public static final EnvVar LEASE_NAME =
            new EnvVar("LEASE_NAME", "aura-cdc-worker", "", "coordination.k8s.io/v1 Lease name");
    public static final EnvVar LEASE_NAMESPACE = new EnvVar("LEASE_NAMESPACE", "POD_NAMESPACE", "", "Lease namespace");
    public static final EnvVar LEASE_DURATION_SECONDS = new EnvVar(
            "LEASE_DURATION_SECONDS", "15", "s", "Lease duration; renew deadline and retry period derive from it");

    // ws-front.
    public static final EnvVar WS_PORT =
            new EnvVar("WS_PORT", "4000", "port", "WebSocket, SSE, health and metrics port");
    public static final EnvVar HISTORY_SIZE =
            new EnvVar("HISTORY_SIZE", "100", "messages", "Per-channel broadcast history ring");
    public static final EnvVar WS_IO_THREADS =
            new EnvVar("WS_IO_THREADS", "0", "threads", "Netty event loop threads (0 = 2 x cores)");
    public static final EnvVar WS_MAX_FRAME_BYTES = new EnvVar(
            "WS_MAX_FRAME_BYTES", "5000000", "bytes", "Largest WebSocket message accepted (Supabase: 5,000,000)");
    public static final EnvVar WS_IDLE_TIMEOUT_MS = new EnvVar(
            "WS_IDLE_TIMEOUT_MS",
            "60000",
            "ms",
            "A socket with no inbound frame for this long is closed (clients heartbeat every 25 s)");
    public static final EnvVar WS_FRAGMENT_TIMEOUT_MS = new EnvVar(
            "WS_FRAGMENT_TIMEOUT_MS",
            "10000",
            "ms",
            "A fragmented WebSocket message not completed within this is closed with 1008");
    public static final EnvVar HTTP_KEEP_ALIVE_TIMEOUT_MS = new EnvVar(
            "HTTP_KEEP_ALIVE_TIMEOUT_MS",
            "75000",
            "ms",
            "A keep-alive HTTP connection whose next request head is not complete this long after a response is closed");
    public static final EnvVar HTTP_BODY_TIMEOUT_MS = new EnvVar(
            "HTTP_BODY_TIMEOUT_MS",
            "10000",
            "ms",
            "A request body not complete this long after its head is answered 408 and closed");
    public static final EnvVar WS_MAX_CHANNELS_PER_CONNECTION = new EnvVar(
            "WS_MAX_CHANNELS_PER_CONNECTION",
            "100",
            "channels",
            "Joined channels per connection (ChannelRateLimitReached)");
    public static final EnvVar WS_MAX_JOINS_PER_SECOND = new EnvVar(
            "WS_MAX_JOINS_PER_SECOND",
            "100",
            "joins/s",
            "Joins per second per connection (ClientJoinRateLimitReached)");
    public static final EnvVar WS_MAX_EVENTS_PER_SECOND = new EnvVar(
            "WS_MAX_EVENTS_PER_SECOND",
            "100",
            "events/s",
            "Client broadcast/presence events per second per connection");
    public static final EnvVar WS_MAX_BROADCAST_PAYLOAD_BYTES = new EnvVar(
            "WS_MAX_BROADCAST_PAYLOAD_BYTES",
            "3072000",
            "bytes",
            "Largest broadcast payload, default for every project (Supabase: 3,000 KB; free plan 256 KB)");
    public static final EnvVar WS_MAX_PRESENCE_EVENTS_PER_SECOND = new EnvVar(
            "WS_MAX_PRESENCE_EVENTS_PER_SECOND", "10", "events/s", "Presence track/untrack per second per connection");
    public static final EnvVar WS_MAX_BINDINGS_PER_JOIN = new EnvVar(
            "WS_MAX_BINDINGS_PER_JOIN",
            "100",
            "bindings",
            "postgres_changes bindings in one join (each is a registry entry and a database check)");
    public static final EnvVar WS_MAX_PRESENCE_PAYLOAD_BYTES = new EnvVar(
            "WS_MAX_PRESENCE_PAYLOAD_BYTES",
            "10240",
            "bytes",
            "Largest presence track payload (the state of one presence key, sent to every member)");
    public static final EnvVar PROJECT_MAX_CONCURRENT_USERS = new EnvVar(
            "PROJECT_MAX_CONCURRENT_USERS",
            "200",
            "connections",
            "Connections per project across replicas (ConnectionRateLimitReached, HTTP 429); per-project override in aura_platform.project_limits");
    public static final EnvVar PROJECT_MAX_EVENTS_PER_SECOND = new EnvVar(
            "PROJECT_MAX_EVENTS_PER_SECOND",
            "100",
            "events/s",
            "Client broadcast/presence messages per second per project across replicas (MessagePerSecondRateLimitReached)");
    public static final EnvVar PROJECT_MAX_JOINS_PER_SECOND = new EnvVar(
            "PROJECT_MAX_JOINS_PER_SECOND",
            "100",
            "joins/s",
            "Channel joins per second per project across replicas (ClientJoinRateLimitReached)");
    public static final EnvVar PROJECT_MAX_BYTES_PER_SECOND = new EnvVar(
            "PROJECT_MAX_BYTES_PER_SECOND",
            "100000",
            "bytes/s",
            "Client message payload bytes per second per project across replicas (MessagePerSecondRateLimitReached)");
    public static final EnvVar PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND = new EnvVar(
            "PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND",
            "20",
            "events/s",
            "Presence track/untrack per second per project across replicas (ClientPresenceRateLimitReached)");
    public static final EnvVar PROJECT_MAX_CHECKS_PER_SECOND = new EnvVar(
            "PROJECT_MAX_CHECKS_PER_SECOND",
            "0",
            "checks/s",
            "Subscription checks per second per project across replicas that joins may cause: one per distinct postgres_changes binding, one per private channel (SubscriptionCheckRateLimitReached); 0: ten times the project's max_joins_per_second");
    public static final EnvVar PROJECT_MAX_REGISTRY_BYTES = new EnvVar(
            "PROJECT_MAX_REGISTRY_BYTES",
            "0",
            "bytes",
            "Bytes one project's postgres_changes bindings may occupy in the aura_subscriptions bucket across replicas (RegistryQuotaExceeded); 0: REGISTRY_BUCKET_MAX_BYTES / 40");
    public static final EnvVar PROJECT_MAX_PRESENCE_BYTES = new EnvVar(
            "PROJECT_MAX_PRESENCE_BYTES",
            "0",
            "bytes",
            "Bytes one project's presences may occupy in the aura_presence bucket across replicas (PresenceQuotaExceeded); 0: PRESENCE_BUCKET_MAX_BYTES / 40");
    public static final EnvVar PROJECT_USAGE_INTERVAL_MS = new EnvVar(
            "PROJECT_USAGE_INTERVAL_MS",
            "1000",
            "ms",
            "Interval of each replica's per-project usage report to the others (how stale cross-replica counts may be)");
    public static final EnvVar PROJECT_LIMITS_REFRESH_MS = new EnvVar(
            "PROJECT_LIMITS_REFRESH_MS",
            "30000",
            "ms",
            "Age after which a project's limit overrides are asked again from a cdc-worker");
    public static final EnvVar WS_WRITE_BUFFER_LOW_BYTES = new EnvVar(
            "WS_WRITE_BUFFER_LOW_BYTES", "262144", "bytes", "Outbound buffer low water mark (writable again below)");
    public static final EnvVar WS_WRITE_BUFFER_HIGH_BYTES = new EnvVar(
            "WS_WRITE_BUFFER_HIGH_BYTES", "1048576", "bytes", "Outbound buffer high water mark (unwritable above)");
    public static final EnvVar WS_MAX_OUTBOUND_BYTES = new EnvVar(
            "WS_MAX_OUTBOUND_BYTES", "8388608", "bytes", "Queued outbound bytes that disconnect a client at once");
    public static final EnvVar WS_SLOW_CLIENT_TIMEOUT_MS = new EnvVar(
            "WS_SLOW_CLIENT_TIMEOUT_MS", "10000", "ms", "Time a client may stay unwritable before it is disconnected");
    public static final EnvVar WS_MAX_QUEUE_DELAY_MS = new EnvVar(
            "WS_MAX_QUEUE_DELAY_MS",
            "5000",
            "ms",
            "Longest a message waits in an event loop's queue; its recipients are disconnected instead (overload)");
    public static final EnvVar WS_MAX_QUEUE_BYTES = new EnvVar(
            "WS_MAX_QUEUE_BYTES",
            "268435456",
            "bytes",
            "Bytes queued per event loop; a message that does not fit disconnects its recipients (overload)");
    public static final EnvVar WS_SHUTDOWN_GRACE_SECONDS = new EnvVar(
            "WS_SHUTDOWN_GRACE_SECONDS",
            "20",
            "s",
            "On SIGTERM: time between 'Server requested disconnect' and closing the remaining sockets");
    public static final EnvVar HISTORY_MAX_CHANNELS = new EnvVar(
            "HISTORY_MAX_CHANNELS",
            "10000",
            "channels",
            "Channels whose broadcast history is kept (stalest dropped first)");
    public static final EnvVar HISTORY_MAX_BYTES = new EnvVar(
            "HISTORY_MAX_BYTES",
            "67108864",
            "bytes",
            "Broadcast history memory in all (stalest channels dropped first)");
    public static final EnvVar HISTORY_MAX_CHANNELS_PER_PROJECT = new EnvVar(
            "HISTORY_MAX_CHANNELS_PER_PROJECT",
            "1000",
            "channels",
            "Channels with broadcast history per project (the project's stalest dropped first)");
    public static final EnvVar HISTORY_MAX_BYTES_PER_PROJECT = new EnvVar(
            "HISTORY_MAX_BYTES_PER_PROJECT",
            "8388608",
            "bytes",
            "Broadcast history memory per project (the project's stalest channels dropped first)");
    public static final EnvVar HISTORY_TTL_SECONDS = new EnvVar(
            "HISTORY_TTL_SECONDS",
            "600",
            "s",
            "A channel's history is dropped after this long without a new broadcast");
    public static final EnvVar WS_CDC_STATUS_TIMEOUT_MS = new EnvVar(
            "WS_CDC_STATUS_TIMEOUT_MS",
            "15000",
            "ms",
            "No cdc-worker status heartbeat (every 5 s) for this long: postgres_changes subscribers get a system error; must exceed 5000");
    public static final EnvVar WS_REPLICATION_READY_TIMEOUT_MS = new EnvVar(
            "WS_REPLICATION_READY_TIMEOUT_MS",
            "15000",
            "ms",
            "A join with config.broadcast.replication_ready waits this long for changes to flow (an active cdc-worker's fresh status) before its system error");
    public static final EnvVar SSE_HEARTBEAT_MS =
            new EnvVar("SSE_HEARTBEAT_MS", "15000", "ms", "Interval of SSE keep-alive comments");
    public static final EnvVar SUBSCRIPTION_CHECK_TIMEOUT_MS = new EnvVar(
            "SUBSCRIPTION_CHECK_TIMEOUT_MS",
            "2000",
            "ms",
            "Wait for a cdc-worker to validate a postgres_changes binding at join");
    public static final EnvVar SUBSCRIPTION_REFRESH_MS = new EnvVar(
            "SUBSCRIPTION_REFRESH_MS",
            "30000",
            "ms",
            "Re-put interval of registry entries (the bucket's max age is at least 120 s, the longest resume"
                    + " window + 40 s; keep this at 30 s or less)");
    public static final EnvVar PRESENCE_MAX_AGE_MS = new EnvVar(
            "PRESENCE_MAX_AGE_MS",
            "60000",
            "ms",
            "Max age of the aura_presence KV bucket (set when it is created); live presences are re-put every quarter of it");
    public static final EnvVar PRESENCE_BUCKET_MAX_BYTES =
            new EnvVar("PRESENCE_BUCKET_MAX_BYTES", "67108864", "bytes", "Byte limit of the aura_presence KV bucket");
    public static final EnvVar WS_DEDUPE_WINDOW_EVENTS = new EnvVar(
            "WS_DEDUPE_WINDOW_EVENTS",
            "100000",
            "events",
            "Change event ids remembered to drop re-published duplicates (Aura-Event-Id)");
    public static final EnvVar WS_DEDUPE_WINDOW_BYTES = new EnvVar(
            "WS_DEDUPE_WINDOW_BYTES", "16777216", "bytes", "Memory bound of the remembered change event ids");
    public static final EnvVar AURA_HISTORY_STORAGE = new EnvVar(
            "AURA_HISTORY_STORAGE",
            "file",
            "",
            "Storage of the per-project postgres_changes history streams (resume, docs/design.md R): file or memory");
    public static final EnvVar AURA_HISTORY_REPLICAS = new EnvVar(
            "AURA_HISTORY_REPLICAS",
            "1",
            "count",
            "Replicas of each per-project history stream (1 to 5; at most the JetStream cluster's size)");
    public static final EnvVar AURA_HISTORY_REFRESH_MS = new EnvVar(
            "AURA_HISTORY_REFRESH_MS",
            "5000",
            "ms",
            "How often the cdc-worker re-reads which projects have resume on and creates, updates or deletes their history streams");
    public static final EnvVar AURA_RESUME_DEFAULT_SECONDS = new EnvVar(
            "AURA_RESUME_DEFAULT_SECONDS",
            "120",
            "s",
            "The postgres_changes resume window of every project whose aura_platform.project_limits row does not"
                    + " set postgres_changes_resume_seconds (docs/design.md R); 0: resume off unless a project sets it");
    public static final EnvVar CDC_LATE_CHECK_TIMEOUT_MS = new EnvVar(
            "CDC_LATE_CHECK_TIMEOUT_MS",
            "2000",
            "ms",
            "statement_timeout of a slow project's checks in its late lane; a change whose check takes longer alone"
                    + " is quarantined and its subscribers get Error 504 (docs/design.md C14)");
    public static final EnvVar CDC_LATE_LANE_BYTES = new EnvVar(
            "CDC_LATE_LANE_BYTES",
            "16777216",
            "bytes",
            "Most bytes of changes one project's late lane holds (a JetStream stream); past it the project's"
                    + " changes are quarantined and its subscribers get Error 503 (docs/design.md C14)");
    public static final EnvVar CDC_QUARANTINE_BYTES = new EnvVar(
            "CDC_QUARANTINE_BYTES",
            "67108864",
            "bytes",
            "Most bytes one project's quarantine keeps (a JetStream stream; the oldest entries go first;"
                    + " docs/operations.md, Quarantine)");
    public static final EnvVar CDC_QUARANTINE_MAX_AGE_HOURS =
            new EnvVar("CDC_QUARANTINE_MAX_AGE_HOURS", "168", "hours", "How long a quarantined change is kept");
    public static final EnvVar RESUME_BUCKET_MAX_BYTES = new EnvVar(
            "RESUME_BUCKET_MAX_BYTES",
            "33554432",
            "bytes",
            "Byte limit of the aura_resume KV bucket (resume records of postgres_changes channels); each project may"
                    + " hold 1/40 of it (project_limits.max_resume_bytes overrides)");
    public static final EnvVar PRESENCE_RECONCILE_MS = new EnvVar(
            "PRESENCE_RECONCILE_MS",
            "5000",
            "ms",
            "Interval of the presence reconciliation (expired keys of crashed replicas become leaves)");

    public static final List<EnvVar> CDC_WORKER = List.of(
            POSTGRES_REPLICATION_URL,
            POSTGRES_URL,
            POSTGRES_TENANT_URL,
            NATS_URL,
            NATS_USER,
            NATS_PASSWORD,
            NATS_NKEY_SEED_FILE,
            NATS_CREDS_FILE,
            NATS_TLS_CA_FILE,
            NATS_TLS_CERT_FILE,
            NATS_TLS_KEY_FILE,
            REGISTRY_BUCKET_MAX_BYTES,
            AURA_JWT_SECRET,
            AURA_JWT_ACCEPT_HS256,
            AURA_JWT_JWKS,
            AURA_JWT_JWKS_FILE,
            AURA_JWT_JWKS_URL,
            AURA_JWT_JWKS_CACHE_SECONDS,
            AURA_JWT_JWKS_MIN_REFRESH_SECONDS,
            CDC_HTTP_PORT,
            CDC_SLOT_NAME,
            CDC_SOURCE,
            CDC_BUFFER_BYTES,
            CDC_BATCH_SIZE,
            CDC_FETCH_SIZE,
            CDC_IDLE_BACKOFF_MS,
            CDC_TABLE_REFRESH_MS,
            CDC_NUM_SHARDS,
            CDC_MAX_RECORD_BYTES,
            CDC_REDECODE_WARN_BYTES,
            CDC_TENANT_STATEMENT_TIMEOUT_MS,
            CDC_TENANT_LOCK_TIMEOUT_MS,
            CDC_MESSAGES_RETENTION_HOURS,
            CDC_MESSAGES_JANITOR_MS,
            AURA_HISTORY_STORAGE,
            AURA_HISTORY_REPLICAS,
            AURA_HISTORY_REFRESH_MS,
            AURA_RESUME_DEFAULT_SECONDS,
            CDC_LATE_CHECK_TIMEOUT_MS,
            CDC_LATE_LANE_BYTES,
            CDC_QUARANTINE_BYTES,
            CDC_QUARANTINE_MAX_AGE_HOURS,
            LEADER_ELECTION,
            LEASE_NAME,
            LEASE_NAMESPACE,
            LEASE_DURATION_SECONDS,
            INSTANCE_ID,
            POD_NAME,
            POD_NAMESPACE);

    public static final List<EnvVar> WS_FRONT = List.of(
            NATS_URL,
            NATS_USER,
            NATS_PASSWORD,
            NATS_NKEY_SEED_FILE,
            NATS_CREDS_FILE,
            NATS_TLS_CA_FILE,
            NATS_TLS_CERT_FILE,
            NATS_TLS_KEY_FILE,
            REGISTRY_BUCKET_MAX_BYTES,
            PRESENCE_BUCKET_MAX_BYTES,
            WS_DEDUPE_WINDOW_EVENTS,
            WS_DEDUPE_WINDOW_BYTES,
            AURA_JWT_SECRET,
            AURA_JWT_ACCEPT_HS256,
            AURA_JWT_JWKS,
            AURA_JWT_JWKS_FILE,
            AURA_JWT_JWKS_URL,
            AURA_JWT_JWKS_CACHE_SECONDS,
            AURA_JWT_JWKS_MIN_REFRESH_SECONDS,
            WS_PORT,
            HISTORY_SIZE,
            INSTANCE_ID,
            POD_NAME,
            POD_NAMESPACE,
            WS_IO_THREADS,
            WS_MAX_FRAME_BYTES,
            WS_IDLE_TIMEOUT_MS,
            WS_FRAGMENT_TIMEOUT_MS,
            HTTP_KEEP_ALIVE_TIMEOUT_MS,
            HTTP_BODY_TIMEOUT_MS,
            WS_MAX_CHANNELS_PER_CONNECTION,
            WS_MAX_JOINS_PER_SECOND,
            WS_MAX_EVENTS_PER_SECOND,
            WS_MAX_BROADCAST_PAYLOAD_BYTES,
            WS_MAX_PRESENCE_EVENTS_PER_SECOND,
            WS_MAX_BINDINGS_PER_JOIN,
            WS_MAX_PRESENCE_PAYLOAD_BYTES,
            PROJECT_MAX_CONCURRENT_USERS,
            PROJECT_MAX_EVENTS_PER_SECOND,
            PROJECT_MAX_JOINS_PER_SECOND,
            PROJECT_MAX_BYTES_PER_SECOND,
            PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND,
            PROJECT_MAX_CHECKS_PER_SECOND,
            PROJECT_MAX_REGISTRY_BYTES,
            PROJECT_MAX_PRESENCE_BYTES,
            PROJECT_USAGE_INTERVAL_MS,
            PROJECT_LIMITS_REFRESH_MS,
            WS_WRITE_BUFFER_LOW_BYTES,
            WS_WRITE_BUFFER_HIGH_BYTES,
            WS_MAX_OUTBOUND_BYTES,
            WS_SLOW_CLIENT_TIMEOUT_MS,
            WS_MAX_QUEUE_DELAY_MS,
            WS_MAX_QUEUE_BYTES,
            WS_SHUTDOWN_GRACE_SECONDS,
            SUBSCRIPTION_CHECK_TIMEOUT_MS,
            SUBSCRIPTION_REFRESH_MS,
            PRESENCE_MAX_AGE_MS,
            PRESENCE_RECONCILE_MS,
            HISTORY_MAX_CHANNELS,
            HISTORY_MAX_BYTES,
            HISTORY_MAX_CHANNELS_PER_PROJECT,
            HISTORY_MAX_BYTES_PER_PROJECT,
            HISTORY_TTL_SECONDS,
            WS_CDC_STATUS_TIMEOUT_MS,
            WS_REPLICATION_READY_TIMEOUT_MS,
            RESUME_BUCKET_MAX_BYTES,
            SSE_HEARTBEAT_MS);
}
