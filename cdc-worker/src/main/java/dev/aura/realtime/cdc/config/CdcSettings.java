package dev.aura.realtime.cdc.config;

import dev.aura.realtime.common.config.Setting;
import dev.aura.realtime.common.config.SharedSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Every environment variable the cdc-worker reads, declared once: name, type, unit, default,
 * range and doc ({@link Setting}). {@link CdcConfig}, {@link LeaderConfig} and
 * {@link TenantSqlConfig} read them only through these declarations; docs/configuration.md's
 * cdc-worker table is generated from {@link #ALL} and the chart test checks the chart against it.
 */
public final class CdcSettings {
    private CdcSettings() {}

    private static final long GIB = 1024L * 1024 * 1024;

    public static final Setting<String> POSTGRES_REPLICATION_URL = Setting.required("POSTGRES_REPLICATION_URL")
            .doc("JDBC URL of a role with REPLICATION (slot polling); required");
    public static final Setting<String> POSTGRES_URL = Setting.optional("POSTGRES_URL", "POSTGRES_REPLICATION_URL")
            .doc("JDBC URL of the worker's platform login (aura_platform, catalogs, control API); never runs tenant"
                    + " SQL");
    public static final Setting<String> POSTGRES_TENANT_URL = Setting.optional(
                    "POSTGRES_TENANT_URL", "(unset: the worker provisions login <CDC_SLOT_NAME>_tenant)")
            .doc("JDBC URL with the credentials of the unprivileged login that runs the checks of tenant SQL (through"
                    + " each project's runner); its host and database also serve the project logins;"
                    + " see docs/security.md");
    public static final Setting<Duration> CDC_TENANT_STATEMENT_TIMEOUT_MS = Setting.millis(
                    "CDC_TENANT_STATEMENT_TIMEOUT_MS", 250)
            .range(10, 600_000)
            .doc("statement_timeout of tenant SQL in the shards; a project whose check takes longer goes to its late"
                    + " lane (docs/design.md C14)");
    public static final Setting<Duration> CDC_TENANT_LOCK_TIMEOUT_MS = Setting.millis("CDC_TENANT_LOCK_TIMEOUT_MS", 100)
            .range(10, 600_000)
            .doc("lock_timeout of tenant SQL (a tenant's lock cannot hold a check)");
    public static final Setting<Integer> CDC_HTTP_PORT =
            Setting.integer("CDC_HTTP_PORT", "port", 8081).range(0, 65535).doc("Health, metrics and control API port");
    public static final Setting<String> CDC_SLOT_NAME = Setting.text("CDC_SLOT_NAME", "aura_cdc_slot")
            // Postgres's rule (ReplicationSlotValidateName): lower-case letters, digits and underscores.
            .matching("[a-z0-9_]{1,63}", "Postgres slot name rules")
            .doc("Logical replication slot name (plugin wal2json)");
    public static final Setting<CdcSource> CDC_SOURCE = Setting.oneOf("CDC_SOURCE", CdcSource.STREAM)
            .doc("How the slot is read: stream (logical replication protocol, each WAL record decoded once) | poll"
                    + " (SQL interface, pg_logical_slot_peek_changes); docs/design.md C12");
    public static final Setting<Long> CDC_BUFFER_BYTES = Setting.bytes("CDC_BUFFER_BYTES", 64L * 1024 * 1024)
            .range(4L * 1024 * 1024, 64 * GIB)
            .doc("Heap for changes between the slot and NATS's confirmation (shard queues, the poll fetch,"
                    + " unconfirmed publishes)");
    public static final Setting<Integer> CDC_BATCH_SIZE = Setting.integer("CDC_BATCH_SIZE", "changes", 1000)
            .range(1, 1_000_000)
            .doc("upto_nchanges of each peek (checked at commit boundaries; poll source)");
    public static final Setting<Integer> CDC_FETCH_SIZE = Setting.integer("CDC_FETCH_SIZE", "rows", 500)
            .range(1, 100_000)
            .doc("JDBC fetch size while streaming a peek result (poll source; at most CDC_BUFFER_BYTES / 4 of 64 KiB"
                    + " rows)");
    public static final Setting<Duration> CDC_IDLE_BACKOFF_MS =
            Setting.millis("CDC_IDLE_BACKOFF_MS", 100).range(0, 60_000).doc("Sleep after an empty poll (poll source)");
    public static final Setting<Duration> CDC_TABLE_REFRESH_MS = Setting.millis("CDC_TABLE_REFRESH_MS", 3000)
            .range(100, 3_600_000)
            .doc("Refresh period of the cached enabled-table list; the slot readers no longer use it (they read the"
                    + " list fresh every round)");
    public static final Setting<Integer> CDC_NUM_SHARDS =
            Setting.integer("CDC_NUM_SHARDS", "count", 4).range(1, 256).doc("RLS worker shards (routed by project id)");
    public static final Setting<Integer> CDC_MAX_RECORD_BYTES = Setting.integer(
                    "CDC_MAX_RECORD_BYTES", "bytes", 1024 * 1024)
            .range(1024, 64 * 1024 * 1024)
            .doc("Record size above which values over 64 bytes are dropped (Error 413)");
    public static final Setting<Long> CDC_REDECODE_WARN_BYTES = Setting.bytes("CDC_REDECODE_WARN_BYTES", GIB / 4)
            .doc("Warn when restart_lsn lags confirmed_flush_lsn by more (a long-open transaction)");
    public static final Setting<Duration> CDC_MESSAGES_RETENTION_HOURS = Setting.hours(
                    "CDC_MESSAGES_RETENTION_HOURS", 72)
            .range(1, 24 * 365)
            .doc("How long rows of the projects' realtime messages tables are kept (Broadcast from Database,"
                    + " persisted messages, replay; Supabase: 72); keep equal on every replica");
    public static final Setting<Duration> CDC_MESSAGES_JANITOR_MS = Setting.millis("CDC_MESSAGES_JANITOR_MS", 600_000)
            .range(1_000, 86_400_000)
            .doc("Period of the leader's janitor deleting messages older than CDC_MESSAGES_RETENTION_HOURS or past"
                    + " their persist ttl (expires_at)");
    public static final Setting<String> AURA_HISTORY_STORAGE = Setting.oneOf(
                    "AURA_HISTORY_STORAGE", "file", "file", "memory")
            .doc("Storage of the per-project postgres_changes history streams (resume, docs/design.md R), late lanes"
                    + " and quarantines: file or memory");
    public static final Setting<Integer> AURA_HISTORY_REPLICAS = Setting.integer("AURA_HISTORY_REPLICAS", "count", 1)
            .range(1, 5)
            .doc("Replicas of each per-project history stream (at most the JetStream cluster's size)");
    public static final Setting<Duration> AURA_HISTORY_REFRESH_MS = Setting.millis("AURA_HISTORY_REFRESH_MS", 5000)
            .range(100, 3_600_000)
            .doc("How often the cdc-worker re-reads which projects have resume on and creates, updates or deletes"
                    + " their history streams");
    public static final Setting<Duration> AURA_RESUME_DEFAULT_SECONDS = Setting.seconds(
                    "AURA_RESUME_DEFAULT_SECONDS", 0)
            .range(0, 86_400)
            .doc(
                    "The postgres_changes resume window of every project whose aura_platform.project_limits row does not"
                            + " set postgres_changes_resume_seconds (docs/design.md R); 0: resume off unless a project sets it");
    public static final Setting<Duration> CDC_SHARD_CHECK_BUDGET_MS = Setting.millis("CDC_SHARD_CHECK_BUDGET_MS", 25)
            .range(5, 600_000)
            .doc("Time one project's RLS checks may take in one shard run; a project whose checks take more goes to its"
                    + " late lane, so it delays the projects sharing its shard by at most this (docs/design.md C14)");
    public static final Setting<Duration> CDC_LATE_CHECK_TIMEOUT_MS = Setting.millis("CDC_LATE_CHECK_TIMEOUT_MS", 2000)
            .range(10, 600_000)
            .doc("statement_timeout of a slow project's checks in its late lane; a change whose check takes longer"
                    + " alone is quarantined and its subscribers get Error 504 (docs/design.md C14)");
    public static final Setting<Long> CDC_LATE_LANE_BYTES = Setting.bytes("CDC_LATE_LANE_BYTES", 16L * 1024 * 1024)
            .range(64 * 1024, 64 * GIB)
            .doc("Most bytes of changes one project's late lane holds (a JetStream stream); past it the project's"
                    + " changes are quarantined and its subscribers get Error 503 (docs/design.md C14)");
    public static final Setting<Long> CDC_QUARANTINE_BYTES = Setting.bytes("CDC_QUARANTINE_BYTES", 64L * 1024 * 1024)
            .range(64 * 1024, 64 * GIB)
            .doc("Most bytes one project's quarantine keeps (a JetStream stream; the oldest entries go first;"
                    + " docs/operations.md, Quarantine)");
    public static final Setting<Duration> CDC_QUARANTINE_MAX_AGE_HOURS = Setting.hours(
                    "CDC_QUARANTINE_MAX_AGE_HOURS", 168)
            .range(1, 24 * 365)
            .doc("How long a quarantined change is kept");
    public static final Setting<Duration> PROJECT_JWKS_TIMEOUT_MS = Setting.millis("PROJECT_JWKS_TIMEOUT_MS", 2_000)
            .range(100, 60_000)
            .doc("Whole time one fetch of a project's JWKS URL may take (connect, headers, body); then it is abandoned"
                    + " and the issuer's tokens are refused until a later fetch succeeds (docs/security.md)");
    public static final Setting<Long> PROJECT_JWKS_MAX_BYTES = Setting.bytes("PROJECT_JWKS_MAX_BYTES", 256L * 1024)
            .range(1024, 16L * 1024 * 1024)
            .doc("Largest JWKS body read from a project's JWKS URL; a longer one is abandoned at this many bytes");
    public static final Setting<Boolean> PROJECT_JWKS_PRIVATE_ADDRESSES = Setting.bool(
                    "PROJECT_JWKS_PRIVATE_ADDRESSES", false)
            .doc("Allow project JWKS URLs whose host resolves to a loopback, private, link-local or other"
                    + " non-public address (off: a project cannot make the worker fetch from inside the network)");
    public static final Setting<ElectionMode> LEADER_ELECTION = Setting.oneOf("LEADER_ELECTION", ElectionMode.AUTO)
            .doc("auto (a Kubernetes Lease inside a pod, always leader outside one) | kubernetes | disabled (always"
                    + " leader: one replica only)");
    public static final Setting<String> LEASE_NAME =
            Setting.text("LEASE_NAME", "aura-cdc-worker").doc("coordination.k8s.io/v1 Lease name");
    public static final Setting<String> LEASE_NAMESPACE = Setting.optional(
                    "LEASE_NAMESPACE", "POD_NAMESPACE, else the service account's namespace, else default")
            .doc("Lease namespace");
    public static final Setting<Duration> LEASE_DURATION_SECONDS = Setting.seconds("LEASE_DURATION_SECONDS", 15)
            .range(2, 3600)
            .doc("Lease duration; renew deadline and retry period derive from it");
    public static final Setting<String> POD_NAMESPACE =
            Setting.optional("POD_NAMESPACE", "(unset)").doc("Pod namespace from the downward API");

    /** The cdc-worker's own settings, in the order of docs/configuration.md. */
    private static final List<Setting<?>> OWN = List.of(
            POSTGRES_REPLICATION_URL,
            POSTGRES_URL,
            POSTGRES_TENANT_URL,
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
            CDC_SHARD_CHECK_BUDGET_MS,
            CDC_LATE_CHECK_TIMEOUT_MS,
            CDC_LATE_LANE_BYTES,
            CDC_QUARANTINE_BYTES,
            CDC_QUARANTINE_MAX_AGE_HOURS,
            PROJECT_JWKS_TIMEOUT_MS,
            PROJECT_JWKS_MAX_BYTES,
            PROJECT_JWKS_PRIVATE_ADDRESSES,
            LEADER_ELECTION,
            LEASE_NAME,
            LEASE_NAMESPACE,
            LEASE_DURATION_SECONDS,
            POD_NAMESPACE);

    /** Every variable the cdc-worker reads: its own, then those both binaries read ({@link SharedSettings}). */
    public static final List<Setting<?>> ALL = concat(OWN, SharedSettings.ALL);

    private static List<Setting<?>> concat(List<Setting<?>> a, List<Setting<?>> b) {
        List<Setting<?>> all = new ArrayList<>(a);
        all.addAll(b);
        return List.copyOf(all);
    }
}
