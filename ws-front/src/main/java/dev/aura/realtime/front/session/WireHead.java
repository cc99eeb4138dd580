package dev.aura.realtime.front.session;

import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerAdapter;

/**
 * Marks the head of every connection's pipeline: shared frames ({@code OutFrame}, already complete
 * WebSocket frames or HTTP chunks) are written and flushed from this handler's context, so they
 * reach the socket without passing any encoder or other outbound handler. It must stay the first
 * handler; a handler that has to see every byte (TLS, say) would go before it. Handles no event
 * itself (Netty skips it), sharable.
 */
@ChannelHandler.Sharable
public final class WireHead extends ChannelHandlerAdapter {
    /** Its name in every pipeline. */
    public static final String NAME = "wire";
    /** The one instance (it has no state). */
    public static final WireHead INSTANCE = new WireHead();

    private WireHead() {}
}
