package dev.aura.realtime.front.channel;

import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.auth.Credentials;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.session.ClientSession;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Phoenix channel layer of one connection: routes each client event to its channel, one
 * method per event ({@code phx_join} through the {@link JoinPipeline}). Runs on the connection's
 * event loop; never throws into the pipeline (unexpected errors are logged and the frame is
 * dropped). Not sharable: the last handler of each connection's pipeline, made on the replica's
 * {@link ChannelLayer} (the features every connection shares).
 */
public final class ChannelRouter extends SimpleChannelInboundHandler<PhoenixMessage.Inbound> {
    private static final Logger log = LoggerFactory.getLogger(ChannelRouter.class);
    private static final String PHOENIX = "phoenix";

    private final ChannelLayer layer;
    private final Framing framing;
    private final Claims apiKeyClaims;
    private final ChannelTable table = new ChannelTable();
    private ClientSession session;
    private ChannelLifecycle lifecycle;
    private JoinPipeline joins;
    private InboundHold hold;
    private boolean closed;

    /**
     * @param framing how the connection's shared frames are encoded (its vsn over WebSocket, or SSE)
     * @param apiKeyClaims the verified claims of the connection's {@code apikey}
     */
    public ChannelRouter(ChannelLayer layer, Framing framing, Claims apiKeyClaims) {
        this.layer = layer;
        this.framing = framing;
        this.apiKeyClaims = apiKeyClaims;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        session = layer.session(ctx.channel(), framing, apiKeyClaims);
        lifecycle = layer.lifecycle(session, table);
        hold = new InboundHold(ctx.channel(), this::handle);
        joins = layer.joins(session, table, lifecycle, hold);
        session.onDisconnect(this::disconnect);
        layer.sessions.add(session);
        layer.metrics.connectionOpened();
    }

    /** The connection's session (for tests and the transport). */
    public ClientSession session() {
        return session;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, PhoenixMessage.Inbound msg) {
        layer.metrics.messageIn();
        if (!hold.holds(msg)) {
            handle(msg);
        }
    }

    /** One client event, in the connection's order ({@link InboundHold}). */
    private void handle(PhoenixMessage.Inbound msg) {
        try {
            switch (msg) {
                case PhoenixMessage.Heartbeat h ->
                    session.send(new PhoenixMessage.Reply(h.joinRef(), h.ref(), PHOENIX, "ok", Replies.empty()));
                case PhoenixMessage.Join j -> joins.join(j);
                case PhoenixMessage.Leave l -> leave(l);
                case PhoenixMessage.AccessToken t -> accessToken(t);
                case PhoenixMessage.BroadcastPush b -> broadcast(b);
                case PhoenixMessage.PresencePush p -> presence(p);
                case PhoenixMessage.Malformed m -> malformed(m);
                case PhoenixMessage.Other o -> log.debug("ignoring event {} on {}", o.event(), o.topic());
            }
        } catch (RuntimeException e) {
            LogCode.HandlerFailed.warn(log, "{} on {}: {}", msg.getClass().getSimpleName(), session, e.toString(), e);
        }
    }

    private void leave(PhoenixMessage.Leave l) {
        Membership m = table.joined(l.topic());
        if (m != null) {
            session.send(new PhoenixMessage.Reply(l.joinRef(), l.ref(), l.topic(), "ok", Replies.empty()));
            lifecycle.close(m, true);
        } else if (table.endJoining(l.topic())) {
            session.send(new PhoenixMessage.Reply(l.joinRef(), l.ref(), l.topic(), "ok", Replies.empty()));
            session.send(new PhoenixMessage.Push(l.joinRef(), l.joinRef(), l.topic(), "phx_close", Replies.empty()));
        } else {
            unmatched(l);
        }
    }

    /** A new token for a joined channel: verified, same project, then the channel acts under it. */
    private void accessToken(PhoenixMessage.AccessToken t) {
        Membership m = table.joined(t.topic());
        if (m == null) {
            unmatched(t);
            return;
        }
        String token = t.token();
        if (token == null || token.equals(m.accessToken())) {
            return;
        }
        CompletableFuture<Claims> check = layer.credentials.verify(token);
        hold.after(check, () -> accessTokenChecked(m, token, check));
    }

    private void accessTokenChecked(Membership m, String token, CompletableFuture<Claims> check) {
        if (table.joined(m.topic()) != m) {
            return; // closed while the token was checked
        }
        Claims claims;
        try {
            claims = check.join();
        } catch (CompletionException | CancellationException e) {
            lifecycle.closeWithSystemError(
                    m, SystemMessages.EXT_SYSTEM, Credentials.refusal(e).getMessage());
            return;
        }
        if (!claims.projectId().equals(m.projectId())) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.PROJECT_MISMATCH);
            return;
        }
        m.claims(claims, token);
        lifecycle.scheduleExpiry(m);
        layer.postgres.putEntries(m, m.claims());
        // a join authorised by the apikey alone (realtime-js sends the user's token later when its
        // accessToken callback resolved after subscribe): resume starts now that there is an identity
        layer.resumes.startLate(m);
        // private channels: the new claims must still read (docs/design.md H1)
        layer.privateChannels.recheck(
                m, reason -> lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, reason));
    }

    /**
     * The joined channel a client event (broadcast, presence) is for, once the connection's event
     * rate admits it; null when the event is already answered: unmatched topic, or the channel
     * closed for exceeding the rate.
     */
    private Membership admitEvent(PhoenixMessage.Inbound event) {
        Membership m = table.joined(event.topic());
        if (m == null) {
            unmatched(event);
            return null;
        }
        if (!session.tryEvent(layer.clock.millis())) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.TOO_MANY_MESSAGES);
            return null;
        }
        return m;
    }

    private void broadcast(PhoenixMessage.BroadcastPush b) {
        Membership m = admitEvent(b);
        if (m != null) {
            layer.broadcasts.push(m, b, reason -> lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, reason));
        }
    }

    private void presence(PhoenixMessage.PresencePush p) {
        Membership m = admitEvent(p);
        if (m != null) {
            layer.presencePushes.push(
                    m, p, reason -> lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, reason));
        }
    }

    private void malformed(PhoenixMessage.Malformed m) {
        if (m.ref() != null) {
            session.send(new PhoenixMessage.Reply(
                    m.joinRef(),
                    m.ref(),
                    m.topic() == null ? PHOENIX : m.topic(),
                    "error",
                    Replies.reason(Reasons.malformed(m.reason()))));
        }
    }

    private void unmatched(PhoenixMessage.Inbound msg) {
        if (msg.ref() != null) {
            session.send(new PhoenixMessage.Reply(
                    msg.joinRef(), msg.ref(), msg.topic(), "error", Replies.reason(Reasons.UNMATCHED_TOPIC)));
        }
    }

    /** Server shutdown: tell every channel, close them with phx_close, then close the socket (going away). */
    private void disconnect(String message) {
        for (Membership m : table.joined()) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, message);
        }
        table.clearJoining();
        session.channel()
                .writeAndFlush(new CloseWebSocketFrame(WebSocketCloseStatus.ENDPOINT_UNAVAILABLE))
                .addListener(ChannelFutureListener.CLOSE);
        session.endOutput(); // no data frame may follow a close frame (RFC 6455 5.5.1)
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        cleanup();
        super.channelInactive(ctx);
    }

    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        cleanup();
    }

    private void cleanup() {
        if (closed || session == null) {
            return;
        }
        closed = true;
        lifecycle.closeAll();
        layer.sessions.remove(session);
        layer.metrics.connectionClosed();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("connection {} failed: {}", session, cause.toString());
        ctx.close();
    }
}
