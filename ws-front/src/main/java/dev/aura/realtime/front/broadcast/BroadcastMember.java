package dev.aura.realtime.front.broadcast;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.fanout.Subscriber;

/**
 * A joined channel as broadcast and private channels see it (docs/design.md H1, H2): the channel
 * layer's channel implements it and holds its {@link PrivateAccess}.
 */
public interface BroadcastMember extends Subscriber {
    /** {@code config.private}: joined after a read check; broadcasts and presence need write checks. */
    boolean isPrivate();

    /** {@code config.broadcast.self}: the sender receives its own broadcasts. */
    boolean self();

    /** {@code config.broadcast.ack}: broadcasts are acknowledged with a reply. */
    boolean ack();

    /** The claims the channel acts under now (its join's, or a later {@code access_token}'s). */
    Claims claims();

    /** The channel's read and write checks. */
    PrivateAccess access();

    /** Replies to a client push on this channel. Any thread. */
    void reply(String ref, String status, JsonNode response);
}
