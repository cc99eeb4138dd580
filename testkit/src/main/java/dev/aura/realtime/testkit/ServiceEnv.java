package dev.aura.realtime.testkit;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The environment a test gives one of our binaries, written once (it was copied into every
 * fixture that starts a jar). Only the variables a test must decide are set; everything else
 * keeps the binary's default (docs/configuration.md).
 *
 * <p>Each call returns a new mutable map, so a caller adds or overrides variables with
 * {@code put}/{@code putAll} before passing it to {@link ServiceProcess#startJar} (or to an
 * in-process config).
 */
public final class ServiceEnv {
    /** Table refresh of a test worker: short, so a table enabled by a test is watched within a poll or two. */
    public static final String TEST_TABLE_REFRESH_MS = "300";
    /** Idle backoff of a test worker: short, so an event committed by a test is read at once. */
    public static final String TEST_IDLE_BACKOFF_MS = "20";

    private ServiceEnv() {}

    /**
     * A cdc-worker reading slot {@code slot} of {@code pg} (as superuser, also for
     * {@code POSTGRES_URL}), publishing to {@code nats} as its user with its nkey seed file (the
     * chart's ws-front uses a password: both ways are exercised by every test), with leader
     * election disabled (one
     * worker leads alone; a test of election sets {@code LEADER_ELECTION} itself), a
     * {@value #TEST_TABLE_REFRESH_MS} ms table refresh and a {@value #TEST_IDLE_BACKOFF_MS} ms idle
     * backoff.
     *
     * @param httpPort {@code CDC_HTTP_PORT}; 0 lets an in-process worker pick a free port
     * @return a new mutable map
     */
    public static Map<String, String> cdcWorker(
            PostgresServer pg, NatsServer nats, String jwtSecret, String slot, int httpPort) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("POSTGRES_REPLICATION_URL", pg.jdbcUrl());
        env.putAll(nats.nkeyEnv(NatsServer.User.CDC_WORKER));
        env.put("AURA_JWT_SECRET", jwtSecret);
        env.put("CDC_HTTP_PORT", Integer.toString(httpPort));
        env.put("CDC_SLOT_NAME", slot);
        env.put("CDC_TABLE_REFRESH_MS", TEST_TABLE_REFRESH_MS);
        env.put("CDC_IDLE_BACKOFF_MS", TEST_IDLE_BACKOFF_MS);
        env.put("LEADER_ELECTION", "disabled");
        return env;
    }

    /**
     * A ws-front listening on {@code wsPort} and relaying through {@code nats} as its user, with a
     * password, and per-project limits raised far above Supabase's defaults.
     *
     * @param wsPort {@code WS_PORT}; 0 lets an in-process replica pick a free port
     * @return a new mutable map
     */
    public static Map<String, String> wsFront(NatsServer nats, String jwtSecret, int wsPort) {
        Map<String, String> env = new LinkedHashMap<>();
        env.putAll(nats.env(NatsServer.User.WS_FRONT));
        env.put("AURA_JWT_SECRET", jwtSecret);
        env.put("WS_PORT", Integer.toString(wsPort));
        // Tests and benchmarks run everything in a project or two, far beyond Supabase's
        // per-project defaults (200 connections, 100 KB/s): the per-project limits are raised
        // here, and the tests of those limits set their own.
        env.put("PROJECT_MAX_CONCURRENT_USERS", "1000000");
        env.put("PROJECT_MAX_EVENTS_PER_SECOND", "1000000");
        env.put("PROJECT_MAX_JOINS_PER_SECOND", "1000000");
        env.put("PROJECT_MAX_BYTES_PER_SECOND", "100000000000");
        env.put("PROJECT_MAX_PRESENCE_EVENTS_PER_SECOND", "1000000");
        // and each project may use the whole registry and presence buckets (the default is 1/40 of each)
        env.put("PROJECT_MAX_REGISTRY_BYTES", "1099511627776");
        env.put("PROJECT_MAX_PRESENCE_BYTES", "1099511627776");
        return env;
    }
}
