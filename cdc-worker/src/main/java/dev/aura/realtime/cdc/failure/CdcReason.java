package dev.aura.realtime.cdc.failure;

/**
 * Why the CDC is not active: the closed list of {@code reason} codes of {@code /health}, the
 * logs and the CDC status sent to clients. docs/operations.md explains each one.
 */
public enum CdcReason {
    /** Start-up, before the first successful poll. */
    STARTING("starting", "the change stream is starting"),
    /** Another replica holds the Lease (or election has not finished). */
    NOT_LEADER("not_leader", "no cdc-worker leads the change stream"),
    /** Leader election could not reach the Kubernetes API. */
    LEASE_UNAVAILABLE("lease_unavailable", "leader election cannot reach Kubernetes"),
    /** Postgres cannot be reached or the connection broke (SQLState class 08, 57P). */
    POSTGRES_UNAVAILABLE("postgres_unavailable", "the database cannot be reached"),
    /** Login/authorisation failure (SQLState class 28): retrying will not help until fixed. */
    POSTGRES_AUTH("postgres_auth_failed", "the database refused the worker's login"),
    /** The replication role lacks REPLICATION (and is not superuser). */
    NO_REPLICATION_PRIVILEGE("no_replication_privilege", "the worker's login may not replicate"),
    /** {@code wal_level} is not {@code logical}. */
    WAL_LEVEL_NOT_LOGICAL("wal_level_not_logical", "the database is not set up for logical decoding"),
    /** Postgres error {@code could not access file "wal2json"}: the package is not installed. */
    WAL2JSON_MISSING("wal2json_missing", "the database lacks wal2json"),
    /** Postgres error {@code library "wal2json" may not be used as an output plugin}: not in {@code output_plugin_libraries}. */
    WAL2JSON_NOT_ALLOWED("wal2json_not_allowed", "the database does not allow wal2json"),
    /** {@code replication slot "x" is active for PID n}: another process reads the slot. */
    SLOT_ACTIVE_ELSEWHERE("slot_active_elsewhere", "another process reads the replication slot"),
    /** The slot's WAL was removed ({@code wal_status = lost}); it is being recreated. */
    SLOT_LOST("slot_lost", "the replication slot was lost; changes in a range are lost"),
    /** The slot exists with another output plugin. */
    SLOT_WRONG_PLUGIN("slot_wrong_plugin", "the replication slot uses another plugin"),
    /** NATS did not accept the batch (not connected or flush timed out); the slot is not advanced. */
    NATS_UNAVAILABLE("nats_unavailable", "the message bus did not take the changes"),
    /** No poll succeeded for too long. */
    POLL_STALLED("poll_stalled", "the change stream has not advanced recently"),
    /** Any other error; see the detail. */
    ERROR("error", "the change stream failed and is retrying");

    private final String code;
    private final String description;

    CdcReason(String code, String description) {
        this.code = code;
        this.description = description;
    }

    /**
     * Our own words for the reason: what clients are told ({@code system} messages, through the CDC
     * status) and what {@code /health} starts with; details stay in {@code /health} and the logs.
     */
    public String description() {
        return description;
    }

    /** The snake_case code shown in {@code /health}. */
    public String code() {
        return code;
    }
}
