package dev.aura.realtime.front.transport;

import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.protocol.Topics;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketServerHandshaker;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The WebSocket of a connection whose apikey was refused (docs/protocol.md section 1). A browser
 * never sees the body of an HTTP error answering an upgrade, so realtime-js could only report
 * "transport failure"; instead the upgrade is accepted and the refusal said in the protocol:
 * a {@code phx_join} is answered with a {@code system} error message (what realtime-js hands
 * {@code .on('system', ...)}, as Supabase's channel shutdowns do) and an error reply whose
 * {@code reason} is the refusal (what realtime-js hands the {@code subscribe} callback with
 * {@code CHANNEL_ERROR}), both carrying the refusal's text, heartbeats are
 * answered, and the socket is closed with {@value #CLOSE_CODE} (policy violation, the code
 * Phoenix's long-poll client closes with on a 403) and the reason, right after the first join's
 * reply or {@link #DEADLINE} after the upgrade. The socket holds no session and no project's
 * connection slot; everything else a client sends is dropped. Not sharable; on its event loop.
 */
final class RefusedSocket extends SimpleChannelInboundHandler<PhoenixMessage.Inbound> {
    /** WebSocket close code 1008, policy violation (RFC 6455 section 7.4.1). */
    static final int CLOSE_CODE = 1008;
    /** How long a refused socket waits for a join before it is closed. */
    static final Duration DEADLINE = Duration.ofSeconds(5);
    /** A close frame's reason is at most 123 bytes of UTF-8 (RFC 6455 section 5.5). */
    private static final int MAX_CLOSE_REASON_BYTES = 123;

    private final WebSocketServerHandshaker handshaker;
    private final String reason;
    private ScheduledFuture<?> deadline;
    private boolean closing;

    /** @param reason the refusal as clients read it, e.g. {@code InvalidJWTToken: Token has expired 3 seconds ago} */
    RefusedSocket(WebSocketServerHandshaker handshaker, String reason) {
        this.handshaker = handshaker;
        this.reason = reason;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        deadline = ctx.executor().schedule(() -> close(ctx), DEADLINE.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (deadline != null) {
            deadline.cancel(false);
        }
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, PhoenixMessage.Inbound msg) {
        if (closing) {
            return;
        }
        if (msg instanceof PhoenixMessage.Join join) {
            if (Topics.joinRefusal(join.topic()) == null) {
                String channel = join.topic().substring(Topics.PREFIX.length());
                ctx.write(new PhoenixMessage.Push(
                        join.joinRef(),
                        null,
                        join.topic(),
                        "system",
                        SystemMessages.error(SystemMessages.EXT_SYSTEM, reason, channel)));
            }
            ctx.write(new PhoenixMessage.Reply(
                    join.joinRef(), join.ref(), join.topic(), "error", Replies.reason(reason)));
            close(ctx);
        } else if (msg instanceof PhoenixMessage.Heartbeat beat) {
            ctx.writeAndFlush(
                    new PhoenixMessage.Reply(beat.joinRef(), beat.ref(), beat.topic(), "ok", Replies.empty()));
        }
    }

    private void close(ChannelHandlerContext ctx) {
        if (closing) {
            return;
        }
        closing = true;
        ctx.flush();
        handshaker.close(ctx.channel(), new CloseWebSocketFrame(CLOSE_CODE, closeReason(reason)));
    }

    /** {@code reason} cut to the close frame's limit on a character boundary. */
    static String closeReason(String reason) {
        if (reason.getBytes(StandardCharsets.UTF_8).length <= MAX_CLOSE_REASON_BYTES) {
            return reason;
        }
        StringBuilder cut = new StringBuilder();
        int bytes = 0;
        for (int i = 0; i < reason.length(); ) {
            int cp = reason.codePointAt(i);
            int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (bytes + n > MAX_CLOSE_REASON_BYTES) {
                break;
            }
            cut.appendCodePoint(cp);
            bytes += n;
            i += Character.charCount(cp);
        }
        return cut.toString();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        ctx.close();
    }
}
