package dev.aura.realtime.front.presence;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.front.protocol.JoinConfig;

/**
 * One joined channel of one connection as presence sees it. Identity fields never change;
 * {@link #active()} turns false when the channel closes.
 */
public interface PresenceMember {
    String projectId();

    /** Topic without {@code realtime:}. */
    String channelName();

    /** The channel's identity for presence keys: public and private channels of a name are separate. */
    default String channelKey() {
        return channelName();
    }

    /** The join's {@code config.presence} ({@code key}, {@code enabled}). */
    JoinConfig.Presence presence();

    boolean active();

    /** Sends a server push on this channel. Any thread. */
    void push(String event, JsonNode payload);

    /** Replies to a client push on this channel. Any thread. */
    void reply(String ref, String status, JsonNode response);
}
