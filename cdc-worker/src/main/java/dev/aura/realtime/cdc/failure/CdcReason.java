package dev.aura.realtime.cdc.failure;

/**
 * Why the CDC is not active: the closed list of {@code reason} codes of {@code /health}, the
 * logs and the CDC status sent to clients. docs/operations.md explains each one.
 */
public enum CdcReason {
    /** Start-up, before the first successful poll. */
    STARTING("starting"),
    /** Another replica holds the Lease (or election has not finished). */
    NOT_LEADER("not_leader"),
    /** Leader election could not reach the Kubernetes API. */
    LEASE_UNAVAILABLE("lease_unavailable"),
    /** Postgres cannot be reached or the connection broke (SQLState class 08, 57P). */
    POSTGRES_UNAVAILABLE("postgres_unavailable"),
    /** Login/authorisation failure (SQLState class 28): retrying will not help until fixed. */
    POSTGRES_AUTH("postgres_auth_failed"),
    /** The replication role lacks REPLICATION (and is not superuser). */
    NO_REPLICATION_PRIVILEGE("no_replication_privilege"),
    /** {@code wal_level} is not {@code logical}. */
    WAL_LEVEL_NOT_LOGICAL("wal_level_not_logical"),
    /** Postgres error {@code could not access file "wal2json"}: the package is not installed. */
    WAL2JSON_MISSING("wal2json_missing"),
    /** Postgres error {@code library "wal2json" may not be used as an output plugin}: not in {@code output_plugin_libraries}. */
    WAL2JSON_NOT_ALLOWED("wal2json_not_allowed"),
    /** {@code replication slot "x" is active for PID n}: another process reads the slot. */
    SLOT_ACTIVE_ELSEWHERE("slot_active_elsewhere"),
    /** The slot's WAL was removed ({@code wal_status = lost}); it is being recreated. */
    SLOT_LOST("slot_lost"),
    /** The slot exists with another output plugin. */
    SLOT_WRONG_PLUGIN("slot_wrong_plugin"),
    /** NATS did not accept the batch (not connected or flush timed out); the slot is not advanced. */
    NATS_UNAVAILABLE("nats_unavailable"),
    /** No poll succeeded for too long. */
    POLL_STALLED("poll_stalled"),
    /** Any other error; see the detail. */
    ERROR("error");

    private final String code;

    CdcReason(String code) {
        this.code = code;
    }

    /** The snake_case code shown in {@code /health}. */
    public String code() {
        return code;
    }
}
