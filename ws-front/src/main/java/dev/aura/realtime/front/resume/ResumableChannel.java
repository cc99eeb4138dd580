package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.fanout.Subscriber;
import io.netty.channel.ChannelFuture;

/**
 * A joined channel as postgres_changes resume sees it (docs/design.md R): the channel layer's
 * channel implements it and holds the {@link ResumeState} that resume keeps in it. Resume delivers
 * replayed changes to it as the fan-out does ({@link Subscriber}).
 */
public interface ResumableChannel extends Subscriber {
    /** The claims the channel's registry entries carry now (its join's, or a later {@code access_token}'s). */
    Claims claims();

    /** The channel's resume state. */
    ResumeState resume();

    /**
     * A future completed once everything written to the channel's connection before it reached
     * the socket; it fails when the connection closed first. Event loop only.
     */
    ChannelFuture writeBarrier();
}
