package dev.aura.realtime.cdc.failure;

/**
 * The closed list of codes that start every WARN and ERROR line of the cdc-worker, as
 * {@code [UpperCamelCode] detail} (for example {@code [RlsCheckFailed] ...}); {@link #toString()}
 * is the code. A test checks that every WARN/ERROR call in the sources starts with one of these
 * and that each is used. The snake_case {@link CdcReason} codes of {@code /health} are an API
 * apart; they appear in lines such as {@code [CdcNotActive] wal2json_not_allowed: ...}.
 */
public enum LogCode {
    // start-up and shutdown
    /** A configuration variable is missing or malformed; the process exits with code 2. */
    CONFIG_INVALID,
    /** The platform schema could not be created yet (Postgres unreachable or privileges); retried. */
    PLATFORM_BOOTSTRAP_FAILED,
    /** Tenant SQL is off: the tenant login is privileged, missing or cannot connect (its {@code /health} reason follows). */
    TENANT_SQL_DISABLED,
    /** Start-up failed after Postgres and NATS were reachable (a bug or a refused resource). */
    STARTUP_FAILED,
    /** A component raised while being closed. */
    STOP_FAILED,

    // the CDC loop
    /** The CDC is not active; the line names the {@link CdcReason} code. */
    CDC_NOT_ACTIVE,
    /** An unexpected exception in the slot reader's loop (either source); retried with backoff. */
    SLOT_READ_FAILED,
    /** {@code max_slot_wal_keep_size = -1}: a stalled slot can fill the Postgres disk. */
    WAL_KEEP_UNLIMITED,
    /** A lost slot was dropped and recreated; the changes of the logged LSN range are lost. */
    SLOT_RECREATED,
    /** A lost slot could not be recreated yet; retried. */
    SLOT_RECREATE_FAILED,
    /** A long-open transaction pins {@code restart_lsn}; every poll re-decodes its WAL. */
    REDECODE_BACKLOG,
    /** The enabled-table list could not be re-read; the previous one is kept. */
    ENABLED_TABLES_REFRESH_FAILED,
    /** An enabled table has no replica identity: wal2json drops its UPDATE and DELETE. */
    TABLE_WITHOUT_REPLICA_IDENTITY,
    /** A column type OID is not in {@code pg_type}; reported as {@code unknown}. */
    TYPE_OID_UNKNOWN,
    /** An RLS shard failed on a batch for an unexpected reason; the batch is re-read. */
    SHARD_BATCH_FAILED,
    /** A project's history stream (postgres_changes resume) could not be created, updated or deleted; retried. */
    HISTORY_STREAM_FAILED,
    /**
     * One change could not be delivered as it is (a {@code RowFault}: too large, unprocessable, its
     * late lane full, its check timed out alone, a bug of ours): kept in its project's quarantine,
     * its subscribers told; the line names the project, the event id and the fault, never data.
     */
    ROW_QUARANTINED,
    /** The late lane could not read, deliver or remove a project's late changes; retried (nothing is lost). */
    LATE_LANE_FAILED,

    // RLS denials (fail closed), one line per denial
    /** The table's RLS state could not be read; its matched subscribers were denied. */
    RLS_STATE_UNAVAILABLE,
    /** RLS is on but the table has no primary key to check rows by; denied. */
    RLS_NO_PRIMARY_KEY,
    /** A binding's role is not anon, authenticated or service_role; denied. */
    RLS_UNKNOWN_ROLE,
    /** An RLS check raised (e.g. a policy casting a claim); the subscribers of the rows it raised for were denied. */
    RLS_CHECK_FAILED,
    /** An RLS check outlived {@code statement_timeout} or {@code lock_timeout}; its subscribers were denied for that change. */
    RLS_CHECK_TIMED_OUT,
    /**
     * A decoded transaction was still not visible to new snapshots when the commit-visibility wait
     * ended (a synchronous standby holding the commit back?); its changes were checked anyway.
     */
    COMMIT_NOT_VISIBLE,
    /** A tenant statement outlived its deadline (it caught its timeout) and could not be terminated. */
    TENANT_STATEMENT_NOT_TERMINATED,

    // NATS and the subscription registry
    /** The worker's first NATS connection could not be made (server down, auth, TLS); retried with backoff. */
    NATS_CONNECT_FAILED,
    /** NATS reported connected but returned no flush marker twice; a reconnect was forced. */
    NATS_CONNECTION_DEAF,
    /** The forced NATS reconnect failed. */
    NATS_RECONNECT_FAILED,
    /** The CDC status could not be published. */
    STATUS_PUBLISH_FAILED,
    /** The registry watch could not be (re)started; retried. */
    REGISTRY_WATCH_FAILED,
    /** The registry bucket's max age could not be set to the longest resume window's; retried. */
    REGISTRY_MAX_AGE_FAILED,
    /** The registry's first load did not finish within its timeout; start-up continued. */
    REGISTRY_LOAD_TIMEOUT,
    /** After a NATS reconnect, some replicas did not re-put their bindings in time; matching resumed without them. */
    REGISTRY_RESYNC_TIMEOUT,
    /** A registry entry is not a valid subscription entry; ignored. */
    REGISTRY_ENTRY_INVALID,
    /** The registry watch applied nothing for a sync timeout while the bucket was ahead; re-watched. */
    REGISTRY_WATCH_STALLED,

    // control API and join-time checks
    /** A control API request failed on the database (answered 503). */
    CONTROL_API_DB_FAILED,
    /** A control API request failed unexpectedly (answered 500). */
    CONTROL_API_FAILED,
    /** A join-time subscription check failed on the database (answered "try again"). */
    SUBSCRIPTION_CHECK_DB_FAILED,
    /** A project's limit overrides could not be read; ws-front keeps what it knew and asks again. */
    PROJECT_LIMITS_DB_FAILED,
    /** A question about a project's API key or token issuer failed on the database (ws-front's client is told to try again). */
    PROJECT_KEYS_DB_FAILED,
    /**
     * A project's JWKS URL failed (no answer in time, too large, not 200, not a JWKS, a non-public
     * address): that issuer's tokens are refused until a later fetch succeeds; other projects are
     * unaffected.
     */
    PROJECT_JWKS_FETCH_FAILED,

    // private channels, Broadcast from Database (docs/design.md H1, H2)
    /** A project's realtime schema could not be created or handed to the project's owner; retried. */
    REALTIME_SCHEMA_FAILED,
    // per-project database identity (docs/design.md I)
    /** A project's schema is usable by PUBLIC, a shared client role or another project's role. */
    PROJECT_SCHEMA_SHARED,
    /** A project login's password was refused (its tenant code may change it) and was set again. */
    PROJECT_LOGIN_REPAIRED,
    /**
     * No event trigger keeps the objects that confine projects uneditable by them (the platform
     * login is not superuser, or the guard was removed or is another build's): persisted
     * broadcasts and the janitor are refused.
     */
    CONFINEMENT_UNGUARDED,
    /** A channel-access request (private check, replay, persist) failed on the database (answered "try again"). */
    CHANNEL_ACCESS_DB_FAILED,
    /** A captured message's payload is over the limit: delivered with an {@code Error 413} payload instead. */
    MESSAGE_TOO_LARGE,
    /** A captured messages-table row lacks its topic (the tenant altered the table); not delivered. */
    MESSAGE_ROW_SKIPPED,
    /** The janitor could not remove a project's old messages; retried at its next run. */
    MESSAGES_JANITOR_FAILED,

    // leader election
    /** Leading without a Lease ({@code LEADER_ELECTION=disabled}, or auto outside Kubernetes). */
    LEADER_ELECTION_DISABLED,
    /** The fabric8 leader elector could not be started; retried. */
    ELECTOR_START_FAILED,
    /** The fabric8 leader elector ended with an error; campaigning again. */
    ELECTOR_FAILED,
    /** The elector thread did not stop within the retry period at shutdown. */
    ELECTOR_STOP_TIMEOUT,
    /** Leadership ended (lease lost or fenced); the leader work is stopped. */
    LEADERSHIP_LOST,
    /** The leader work could not be started or stopped at a term change. */
    LEADER_WORK_TERM_FAILED,
    /** The leader work returned, failed or was fenced while still leading; restarted after a backoff. */
    LEADER_WORK_RESTARTED,
    /** The leader work thread did not stop after being interrupted; its fence is revoked. */
    LEADER_WORK_STUCK;

    private final String code;

    LogCode() {
        StringBuilder camel = new StringBuilder();
        for (String word : name().split("_")) {
            camel.append(word.charAt(0)).append(word.substring(1).toLowerCase(java.util.Locale.ROOT));
        }
        this.code = camel.toString();
    }

    /** The code as logged, e.g. {@code RlsCheckFailed}. */
    @Override
    public String toString() {
        return code;
    }
}
