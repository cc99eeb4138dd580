package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.auth.AuthException;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.history.MessageIds;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.protocol.UserBroadcast;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketCloseStatus;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Phoenix channel layer of one connection: one method per client event. Runs on the
 * connection's event loop; never throws into the pipeline (unexpected errors are logged and the
 * frame is dropped). Not sharable.
 */
public final class SessionHandler extends SimpleChannelInboundHandler<PhoenixMessage.Inbound> {
    private static final Logger log = LoggerFactory.getLogger(SessionHandler.class);
    private static final String PHOENIX = "phoenix";

    private final ChannelServices services;
    private final Framing framing;
    private final Claims apiKeyClaims;
    private ClientSession session;
    private ChannelLifecycle lifecycle;
    private JoinFlow joins;
    private PrivateChannels privateChannels;
    private boolean closed;

    /**
     * @param framing how the connection's shared frames are encoded (its vsn over WebSocket, or SSE)
     * @param apiKeyClaims the verified claims of the connection's {@code apikey}
     */
    public SessionHandler(ChannelServices services, Framing framing, Claims apiKeyClaims) {
        this.services = services;
        this.framing = framing;
        this.apiKeyClaims = apiKeyClaims;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        session = new ClientSession(
                ctx.channel(),
                framing,
                apiKeyClaims,
                services.limits(),
                services.metrics(),
                services.fanout().outbox(ctx.channel().eventLoop()));
        lifecycle = new ChannelLifecycle(services, session);
        privateChannels = new PrivateChannels(services, session, lifecycle);
        joins = new JoinFlow(services, session, lifecycle, privateChannels);
        session.onDisconnect(this::disconnect);
        services.sessions().add(session);
        services.metrics().connectionOpened();
    }

    /** The connection's session (for tests and the transport). */
    public ClientSession session() {
        return session;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, PhoenixMessage.Inbound msg) {
        services.metrics().messageIn();
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
        Membership m = session.memberships.get(l.topic());
        if (m != null) {
            session.send(new PhoenixMessage.Reply(l.joinRef(), l.ref(), l.topic(), "ok", Replies.empty()));
            lifecycle.close(m, true);
        } else if (session.pendingJoins.remove(l.topic()) != null) {
            session.send(new PhoenixMessage.Reply(l.joinRef(), l.ref(), l.topic(), "ok", Replies.empty()));
            session.send(new PhoenixMessage.Push(l.joinRef(), l.joinRef(), l.topic(), "phx_close", Replies.empty()));
        } else {
            unmatched(l);
        }
    }

    private void accessToken(PhoenixMessage.AccessToken t) {
        Membership m = session.memberships.get(t.topic());
        if (m == null) {
            unmatched(t);
            return;
        }
        String token = t.token();
        if (token == null || token.equals(m.accessToken())) {
            return;
        }
        Claims claims;
        try {
            claims = services.tokens().verify(token);
        } catch (AuthException e) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, e.getMessage());
            return;
        }
        if (!claims.projectId().equals(m.projectId())) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.PROJECT_MISMATCH);
            return;
        }
        m.claims(claims, token);
        lifecycle.scheduleExpiry(m);
        lifecycle.putEntries(m);
        // a join authorised by the apikey alone (realtime-js sends the user's token later when its
        // accessToken callback resolved after subscribe): resume starts now that there is an identity
        services.resumes().startLate(m);
        privateChannels.recheck(m); // private channels: the new claims must still read (docs/design.md H1)
    }

    /**
     * The joined channel a client event (broadcast, presence) is for, once the connection's event
     * rate admits it; null when the event is already answered: unmatched topic, or the channel
     * closed for exceeding the rate.
     */
    private Membership admitEvent(PhoenixMessage.Inbound event) {
        Membership m = session.memberships.get(event.topic());
        if (m == null) {
            unmatched(event);
            return null;
        }
        if (!session.events.tryAcquire(services.clock().millis())) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.TOO_MANY_MESSAGES);
            return null;
        }
        return m;
    }

    private void broadcast(PhoenixMessage.BroadcastPush b) {
        Membership m = admitEvent(b);
        if (m == null) {
            return;
        }
        UserBroadcast message = b.broadcast();
        int maxPayload = services.quotas().quota(m.projectId()).maxPayloadBytes();
        if (message.payload().length > maxPayload) {
            if (m.ack() && b.ref() != null) {
                m.reply(b.ref(), "error", Replies.reason(Reasons.payloadTooLarge(maxPayload)));
            }
            return;
        }
        if (!services.quotas().tryMessage(m.projectId(), message.payload().length)) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.PROJECT_TOO_MANY_MESSAGES);
            return;
        }
        if (b.persisted() && !m.isPrivate()) {
            // realtime-js refuses this itself; other clients are told rather than silently not stored
            if (b.ref() != null) {
                m.reply(b.ref(), "error", Replies.reason(Reasons.PERSIST_NEEDS_PRIVATE));
            }
            return;
        }
        if (b.persisted() && b.persist().invalid() != null) {
            privateChannels.replyPersist(m, b, b.persist().invalid()); // as a refused insert is told
            return;
        }
        privateChannels.whenWritable(
                m,
                "broadcast",
                message.payload().length,
                () -> {
                    if (b.persisted()) {
                        privateChannels.persist(m, b); // stored, then delivered from the database (H2)
                    } else {
                        send(m, b);
                    }
                },
                refusal -> refuse(m, b.ref(), refusal));
    }

    private void send(Membership m, PhoenixMessage.BroadcastPush b) {
        if (!m.active()) {
            return;
        }
        UserBroadcast message =
                b.broadcast().withId(MessageIds.next(services.clock().millis()));
        services.fanout().broadcastLocal(m.projectId(), m.channelKey(), message, m.self() ? null : session);
        services.publisher().publish(m.projectId(), m.channelKey(), message);
        if (m.ack() && b.ref() != null) {
            m.reply(b.ref(), "ok", Replies.empty());
        }
    }

    /** A private channel's write check refused a client event: the reply when it has a ref, else a system error. */
    private void refuse(Membership m, String ref, String refusal) {
        if (!m.active()) {
            return;
        }
        if (ref != null) {
            m.reply(ref, "error", Replies.reason(refusal));
        } else {
            m.push("system", SystemMessages.error(SystemMessages.EXT_SYSTEM, refusal, m.channelName()));
        }
    }

    private void presence(PhoenixMessage.PresencePush p) {
        Membership m = admitEvent(p);
        if (m == null) {
            return;
        }
        if (!session.presenceEvents.tryAcquire(services.clock().millis())) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.TOO_MANY_PRESENCE_MESSAGES);
            return;
        }
        int maxTrack = services.limits().maxPresencePayloadBytes();
        long bytes = trackBytes(p);
        if (bytes > maxTrack) {
            if (p.ref() != null) {
                m.reply(p.ref(), "error", Replies.reason(Reasons.presencePayloadTooLarge(maxTrack)));
            }
            return;
        }
        if (!services.quotas().tryMessage(m.projectId(), bytes)) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.PROJECT_TOO_MANY_MESSAGES);
            return;
        }
        if (!services.quotas().tryPresence(m.projectId())) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, Reasons.PROJECT_TOO_MANY_PRESENCE_MESSAGES);
            return;
        }
        privateChannels.whenWritable(
                m,
                "presence",
                p.payload().toString().length(),
                () -> {
                    if (m.active()) {
                        services.presence().onPresence(m, p);
                    }
                },
                refusal -> refuse(m, p.ref(), refusal));
    }

    /**
     * The serialised size of a {@code track}'s state (0 for other presence events). Bounded by
     * {@code WS_MAX_PRESENCE_PAYLOAD_BYTES}: every member of the channel on every replica receives
     * it in each {@code presence_state}, and it sits in the presence bucket.
     */
    private long trackBytes(PhoenixMessage.PresencePush p) {
        JsonNode meta = p.payload().get("payload");
        if (!"track".equals(p.payload().path("event").asText()) || meta == null) {
            return 0;
        }
        CountingSink sink = new CountingSink();
        try {
            services.mapper().writeValue(sink, meta);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a parsed tree always serialises; the sink never fails
        }
        return sink.count;
    }

    /** Counts bytes without keeping them. */
    private static final class CountingSink extends OutputStream {
        long count;

        @Override
        public void write(int b) {
            count++;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            count += len;
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
        for (Membership m : List.copyOf(session.memberships.values())) {
            lifecycle.closeWithSystemError(m, SystemMessages.EXT_SYSTEM, message);
        }
        session.pendingJoins.clear();
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
        services.sessions().remove(session);
        services.metrics().connectionClosed();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        log.debug("connection {} failed: {}", session, cause.toString());
        ctx.close();
    }
}
