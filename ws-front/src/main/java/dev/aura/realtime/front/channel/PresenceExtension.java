package dev.aura.realtime.front.channel;

import dev.aura.realtime.front.protocol.PhoenixMessage;

/**
 * The seam presence plugs into (PRODUCT.md D5). Called on the connection's event loop.
 * {@link #onPresence} must answer the push (reply ok or error) when it has a ref.
 */
public interface PresenceExtension {
    /** After a join was accepted and the ok reply sent. */
    void onJoined(Membership membership);

    /**
     * A {@code presence} push ({@code track}/{@code untrack}) on a joined channel.
     *
     * @return false when the connection exceeded its presence rate: the push was not handled and
     *     the channel layer closes the channel with {@link Reasons#TOO_MANY_PRESENCE_MESSAGES}
     */
    boolean onPresence(Membership membership, PhoenixMessage.PresencePush push);

    /** After the channel left or closed, or the connection went away. */
    void onLeft(Membership membership);

    /** Presence not available: pushes get an error reply, nothing is tracked. */
    final class Unavailable implements PresenceExtension {
        @Override
        public void onJoined(Membership membership) {}

        @Override
        public boolean onPresence(Membership membership, PhoenixMessage.PresencePush push) {
            if (push.ref() != null) {
                membership.reply(push.ref(), "error", Replies.reason(Reasons.PRESENCE_UNAVAILABLE));
            }
            return true;
        }

        @Override
        public void onLeft(Membership membership) {}
    }
}
