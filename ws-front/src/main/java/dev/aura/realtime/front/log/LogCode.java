package dev.aura.realtime.front.log;

import org.slf4j.Logger;

/**
 * The closed list of ws-front's WARN and ERROR log codes. Every such line starts with its code in
 * brackets, e.g. {@code [RegistryPutFailed] realtime:room-1 on ClientSession[..]: ...}, so alerts
 * and searches match on the code (docs/operations.md lists the ones worth an alert). Log them
 * through {@link #warn} and {@link #error}: the architecture test fails any other WARN or ERROR
 * call, so a new code has to be added here.
 */
public enum LogCode {
    /** A client broadcast could not be published to the other replicas (NATS refused it). */
    BroadcastPublishFailed,
    /** A change event's {@code data} could not be serialised; the event is not delivered. */
    ChangeEncodeFailed,
    /** The environment holds an invalid configuration; the process exits with status 2. */
    ConfigInvalid,
    /**
     * Writing a queued message on an event loop threw (a bug): the connections it had not reached
     * yet were closed, so they know they missed it.
     */
    DeliveryFailed,
    /** A client frame's handler threw; the frame is dropped, the connection stays. */
    HandlerFailed,
    /**
     * An event loop's delivery queue exceeded its time or byte bound: the connections that would
     * have received the late message were closed (at most one line per second and loop).
     */
    LoopOverloaded,
    /** jnats reported a server error ({@code -ERR}). */
    NatsError,
    /** jnats reported an exception on its own threads. */
    NatsException,
    /**
     * jnats dropped messages for a subscription whose pending messages passed its limits (a slow
     * consumer): the relay missed them.
     */
    NatsSlowConsumer,
    /** Closing presence abandoned KV operations still queued after the bounded wait. */
    PresenceCloseTimeout,
    /** A presence delete failed; the entry expires with the bucket's max age. */
    PresenceDeleteFailed,
    /** A watched presence entry could not be decoded and is ignored. */
    PresenceEntryInvalid,
    /** The presence seam failed after a join; the channel stays joined without presence. */
    PresenceJoinFailed,
    /** The presence seam failed when a channel closed. */
    PresenceLeaveFailed,
    /** A presence put failed; it is re-put on refresh and after a reconnect. */
    PresencePutFailed,
    /** Re-creating the bucket or re-watching after a reconnect failed. */
    PresenceResyncFailed,
    /** A task of the presence view thread threw; that change or push is lost. */
    PresenceViewFailed,
    /**
     * A project's limit overrides could not be asked from a cdc-worker (none answered, or the
     * answer was undecodable); the last known limits (else the global defaults) stay in force.
     */
    ProjectLimitsUnavailable,
    /**
     * No cdc-worker answered a question about a project's API key or token issuer (at most one line
     * a second): the last answer found is used for a while, else the client is told to try again.
     */
    ProjectKeysUnavailable,
    /** A hook run after a NATS disconnect or reconnect threw. */
    ReconnectHookFailed,
    /** Closing the subscription registry abandoned KV operations still queued after the bounded wait. */
    RegistryCloseTimeout,
    /** A registry delete failed; the entry expires with the bucket's max age. */
    RegistryDeleteFailed,
    /**
     * A registry put at join failed (NATS, a full bucket, or an entry the cdc-worker would refuse);
     * the client gets a postgres_changes system error.
     */
    RegistryPutFailed,
    /** The periodic or post-reconnect re-put of registry entries failed for some entries. */
    RegistryRefreshFailed,
    /** A NATS message could not be decoded; it is counted and skipped. */
    RelayDecodeFailed,
    /** A decoded NATS message could not be delivered to local clients. */
    RelayDeliveryFailed,
    /**
     * This replica's NATS link dropped: changes published meanwhile never reach it, so
     * postgres_changes subscribers are told (system error) until it is back.
     */
    RelayLinkLost,
    /**
     * The {@code aura_resume} bucket's max age could not be set to the registry's plus the margin
     * (records of killed replicas stay until the old one); retried every few seconds.
     */
    ResumeBucketMaxAgeFailed,
    /** An SSE event could not be written; the stream's write fails and the connection closes. */
    SseEncodeFailed,
    /** A component raised while being closed; the others are still closed. */
    StopFailed,
    /**
     * This replica's per-project usage report could not be published, or another's could not be
     * decoded; per-project limits count without it until the next one.
     */
    UsageReportFailed;

    /** Logs {@code [Code] <format>} at WARN; a trailing {@link Throwable} argument is logged with its stack trace. */
    public void warn(Logger log, String format, Object... args) {
        if (log.isWarnEnabled()) {
            log.warn(prefixed(format), args);
        }
    }

    /** Logs {@code [Code] <format>} at ERROR; a trailing {@link Throwable} argument is logged with its stack trace. */
    public void error(Logger log, String format, Object... args) {
        if (log.isErrorEnabled()) {
            log.error(prefixed(format), args);
        }
    }

    private String prefixed(String format) {
        return "[" + name() + "] " + format;
    }
}
