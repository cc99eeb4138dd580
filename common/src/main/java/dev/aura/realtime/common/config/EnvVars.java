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
    public static final EnvVar NATS_URL = new EnvVar("NATS_URL", "nats://127.0.0.1:4222", "", "NATS server URL(s), comma-separated");
    public static final EnvVar AURA_JWT_SECRET = new EnvVar("AURA_JWT_SECRET", null, "", "HS256 secret of client JWTs (at least 32 bytes); required");
    public static final EnvVar INSTANCE_ID = new EnvVar("INSTANCE_ID", "POD_NAME, else hostname-random", "", "Instance id used in Aura-Origin and lease identity");
    public static final EnvVar POD_NAME = new EnvVar("POD_NAME", "(unset)", "", "Pod name from the downward API (identity in Kubernetes)");
    public static final EnvVar POD_NAMESPACE = new EnvVar("POD_NAMESPACE", "(unset)", "", "Pod namespace from the downward API");

    // cdc-worker.
    public static final EnvVar POSTGRES_REPLICATION_URL = new EnvVar("POSTGRES_REPLICATION_URL", null, "", "JDBC URL of a role with REPLICATION (slot polling); required");
    public static final EnvVar POSTGRES_URL = new EnvVar("POSTGRES_URL", "POSTGRES_REPLICATION_URL", "", "JDBC URL for RLS checks and platform tables");
    public static final EnvVar CDC_HTTP_PORT = new EnvVar("CDC_HTTP_PORT", "8081", "port", "Health, metrics and control API port");
    public static final EnvVar CDC_SLOT_NAME = new EnvVar("CDC_SLOT_NAME", "aura_cdc_slot", "", "Logical replication slot name (plugin wal2json)");
    public static final EnvVar CDC_BATCH_SIZE = new EnvVar("CDC_BATCH_SIZE", "1000", "changes", "upto_nchanges of each peek (checked at commit boundaries)");
    public static final EnvVar CDC_FETCH_SIZE = new EnvVar("CDC_FETCH_SIZE", "500", "rows", "JDBC fetch size while streaming a peek result");
    public static final EnvVar CDC_IDLE_BACKOFF_MS = new EnvVar("CDC_IDLE_BACKOFF_MS", "100", "ms", "Sleep after an empty poll");
    public static final EnvVar CDC_TABLE_REFRESH_MS = new EnvVar("CDC_TABLE_REFRESH_MS", "3000", "ms", "Refresh period of the enabled-table list (add-tables)");
    public static final EnvVar CDC_NUM_SHARDS = new EnvVar("CDC_NUM_SHARDS", "4", "count", "RLS worker shards (routed by project id)");
    public static final EnvVar CDC_MAX_RECORD_BYTES = new EnvVar("CDC_MAX_RECORD_BYTES", "1048576", "bytes", "Record size above which values over 64 bytes are dropped (Error 413)");
    public static final EnvVar CDC_REDECODE_WARN_BYTES = new EnvVar("CDC_REDECODE_WARN_BYTES", "268435456", "bytes", "Warn when restart_lsn lags confirmed_flush_lsn by more (a long-open transaction)");
    public static final EnvVar LEADER_ELECTION = new EnvVar("LEADER_ELECTION", "auto", "", "auto | kubernetes | disabled");
    public static final EnvVar LEASE_NAME = new EnvVar("LEASE_NAME", "aura-cdc-worker", "", "coordination.k8s.io/v1 Lease name");
    public static final EnvVar LEASE_NAMESPACE = new EnvVar("LEASE_NAMESPACE", "POD_NAMESPACE", "", "Lease namespace");
    public static final EnvVar LEASE_DURATION_SECONDS = new EnvVar("LEASE_DURATION_SECONDS", "15", "s", "Lease duration; renew deadline and retry period derive from it");

    // ws-front.
    public static final EnvVar WS_PORT = new EnvVar("WS_PORT", "4000", "port", "WebSocket, SSE, health and metrics port");
    public static final EnvVar HISTORY_SIZE = new EnvVar("HISTORY_SIZE", "100", "messages", "Per-channel broadcast history ring");

    public static final List<EnvVar> CDC_WORKER = List.of(
            POSTGRES_REPLICATION_URL, POSTGRES_URL, NATS_URL, AURA_JWT_SECRET, CDC_HTTP_PORT, CDC_SLOT_NAME,
            CDC_BATCH_SIZE, CDC_FETCH_SIZE, CDC_IDLE_BACKOFF_MS, CDC_TABLE_REFRESH_MS, CDC_NUM_SHARDS,
            CDC_MAX_RECORD_BYTES, CDC_REDECODE_WARN_BYTES, LEADER_ELECTION, LEASE_NAME, LEASE_NAMESPACE, LEASE_DURATION_SECONDS,
            INSTANCE_ID, POD_NAME, POD_NAMESPACE);

    public static final List<EnvVar> WS_FRONT = List.of(
            NATS_URL, AURA_JWT_SECRET, WS_PORT, HISTORY_SIZE, INSTANCE_ID, POD_NAME);
}
