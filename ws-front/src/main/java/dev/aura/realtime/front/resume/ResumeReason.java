package dev.aura.realtime.front.resume;

/**
 * Why a resume was not possible: the {@code reason} of the {@code ResumeNotPossible} system
 * message (docs/protocol.md). The client refetches.
 */
public enum ResumeReason {
    /** The record is older than the project's resume window (or the registry entries expired). */
    window_exceeded,
    /** The history stream no longer holds the events after the last one delivered. */
    history_evicted,
    /** The CDC slot was recreated since: changes in between are lost. */
    slot_lost,
    /** The same identity joined the topic with other bindings than the record's. */
    bindings_changed,
    /** {@code since} is not an event id of this subscription's history. */
    since_unknown,
    /** More live events arrived during the replay than the channel may buffer. */
    buffer_overflow,
    /** The history could not be read (NATS unavailable). */
    history_unavailable,
    /**
     * The token has the record's role and subject but other claims (issue 38): what the record's
     * subscriptions were allowed is not known to be visible to it.
     */
    claims_changed,
    /**
     * The project's share of the {@code aura_resume} bucket is used up (issue 38): the channel has
     * no record, so its rejoin cannot be resumed. Told at the join that could not write it.
     */
    resume_quota_exceeded,
    /** The {@code aura_resume} bucket itself is full: as {@link #resume_quota_exceeded}, for every project. */
    resume_store_full
}
