package dev.aura.realtime.front.presence;

import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;

/**
 * The seam the channel layer calls presence through (docs/design.md D5). Called on the
 * connection's event loop; never blocks. The channel layer applies the per-connection presence
 * rate ({@code WS_MAX_PRESENCE_EVENTS_PER_SECOND}) before {@link #onPresence}.
 */
public interface PresenceExtension {
    /** After a join was accepted and the ok reply sent. */
    void onJoined(PresenceMember member);

    /**
     * A {@code presence} push ({@code track}/{@code untrack}) on a joined channel; answers it
     * (reply ok or error) when it has a ref.
     */
    void onPresence(PresenceMember member, PhoenixMessage.PresencePush push);

    /** After the channel left or closed, or the connection went away. */
    void onLeft(PresenceMember member);

    /** Presence not available: pushes get an error reply, nothing is tracked. */
    final class Unavailable implements PresenceExtension {
        @Override
        public void onJoined(PresenceMember member) {}

        @Override
        public void onPresence(PresenceMember member, PhoenixMessage.PresencePush push) {
            if (push.ref() != null) {
                member.reply(push.ref(), "error", Replies.reason(Reasons.PRESENCE_UNAVAILABLE));
            }
        }

        @Override
        public void onLeft(PresenceMember member) {}
    }
}
