package dev.aura.realtime.front.protocol;

import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToMessageCodec;
import io.netty.handler.codec.http.websocketx.BinaryWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * WebSocket data frames to {@link PhoenixMessage.Inbound} and {@link PhoenixMessage.Outbound} to
 * text frames, for one connection's {@link Vsn}. Control frames pass through untouched; already
 * encoded {@link WebSocketFrame}s written by the fan-out bypass the encoder.
 *
 * <p>Never throws into the pipeline: an undecodable frame becomes
 * {@link PhoenixMessage.Malformed} (logged at debug and counted) so the handler can answer it.
 * Not sharable (holds the connection's vsn); runs on the channel's event loop.
 */
public final class PhoenixCodec extends MessageToMessageCodec<WebSocketFrame, PhoenixMessage.Outbound> {
    private static final Logger log = LoggerFactory.getLogger(PhoenixCodec.class);

    private final Vsn vsn;
    private final JsonFrames json;
    private final BinaryFrames binary;
    private final Runnable malformedCounter;

    /**
     * @param malformedCounter called once per undecodable frame (metrics)
     */
    public PhoenixCodec(Vsn vsn, JsonFrames json, BinaryFrames binary, Runnable malformedCounter) {
        this.vsn = vsn;
        this.json = json;
        this.binary = binary;
        this.malformedCounter = malformedCounter;
    }

    @Override
    public boolean acceptInboundMessage(Object msg) {
        return msg instanceof TextWebSocketFrame || msg instanceof BinaryWebSocketFrame;
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, WebSocketFrame frame, List<Object> out) {
        PhoenixMessage.Inbound message;
        try {
            if (frame instanceof TextWebSocketFrame) {
                message = json.decode(frame.content(), vsn);
            } else if (vsn == Vsn.V2) {
                message = binary.decode(frame.content());
            } else {
                message = new PhoenixMessage.Malformed(null, null, null, "binary frames need vsn 2.0.0");
            }
        } catch (RuntimeException e) {
            message = new PhoenixMessage.Malformed(
                    null, null, null, "undecodable frame: " + e.getClass().getSimpleName());
        }
        if (message instanceof PhoenixMessage.Malformed m) {
            malformedCounter.run();
            log.debug(
                    "malformed frame on {}: {} (topic={}, ref={})",
                    ctx.channel().id(),
                    m.reason(),
                    m.topic(),
                    m.ref());
        }
        out.add(message);
    }

    @Override
    protected void encode(ChannelHandlerContext ctx, PhoenixMessage.Outbound msg, List<Object> out) {
        out.add(new TextWebSocketFrame(json.encode(msg, vsn, ctx.alloc())));
    }
}
