package dev.aura.realtime.front.transport;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * Netty's aggregator, answering an oversized request as every other error of this server:
 * {@code 413 {"error": "Payload Too Large: ..."}}, then closing the connection.
 */
final class JsonHttpAggregator extends HttpObjectAggregator {
    private final int maxBytes;

    JsonHttpAggregator(int maxBytes) {
        super(maxBytes);
        this.maxBytes = maxBytes;
    }

    @Override
    protected void handleOversizedMessage(ChannelHandlerContext ctx, HttpMessage oversized) {
        HttpRouter.respondAndClose(
                ctx,
                HttpResponseStatus.REQUEST_ENTITY_TOO_LARGE,
                "Payload Too Large: requests may carry at most " + maxBytes + " bytes");
    }
}
