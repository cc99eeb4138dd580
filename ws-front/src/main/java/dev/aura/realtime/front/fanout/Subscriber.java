package dev.aura.realtime.front.fanout;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * One joined channel of one connection as the fan-out sees it. Identity fields never change;
 * {@link #active()} may turn false at any time (the channel closed), after which nothing more is
 * delivered to it.
 */
public interface Subscriber {
    /** The connection the channel belongs to. */
    Recipient recipient();

    /** Full topic, e.g. {@code realtime:room-1}. */
    String topic();

    String projectId();

    /** Topic without {@code realtime:}. */
    String channelName();

    boolean active();

    /** The channel's identity for the local index and history ({@link ChannelKeys}). */
    default String channelKey() {
        return channelName();
    }

    /** Whether broadcasts may be delivered: false for a private member without broadcast read (docs/design.md H1). */
    default boolean readsBroadcast() {
        return true;
    }

    /** The channel's postgres_changes bindings (empty for none). */
    List<PostgresBinding> bindings();

    /** Sends a server push on this channel. Any thread. */
    void push(String event, JsonNode payload);

    /**
     * Remembers that the broadcast with this id was just sent from history by a resume
     * ({@link Fanout#resume}), so its live copy still in flight is not sent again. Event loop only.
     */
    void markResumed(String messageId);

    /** Whether {@link #markResumed} saw this id. Event loop only. */
    boolean resumed(String messageId);

    /**
     * Whether a change for this channel must not be delivered now: held during a resume's replay,
     * or a live copy of a change the replay already sent (docs/design.md R). Relay thread.
     */
    default boolean holdChange(dev.aura.realtime.common.wire.ChangeEvent event) {
        return false;
    }

    /** A change frame with this event id was written to the socket (resume records). Event loop only. */
    default void changeWritten(String eventId) {}

    /** {@code postgres_changes_options.event_id}: records carry {@code _aura_event_id}. */
    default boolean wantsEventIds() {
        return false;
    }
}
