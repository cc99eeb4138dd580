package dev.aura.realtime.front.broadcast;

import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.history.MessageIds;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.quota.ProjectQuotas;
import dev.aura.realtime.front.relay.BroadcastPublisher;
import java.time.Clock;
import java.util.function.Consumer;

/**
 * Broadcast on a joined channel (docs/protocol.md section 3): a client's {@code broadcast} push
 * (the project's payload limit and message rate, a private channel's write check, a persisted
 * message's store), and the history a join replays after its ok reply. Replica-wide; called on
 * the channel's event loop.
 */
public final class Broadcasts {
    private final PrivateChannels privateChannels;
    private final ProjectQuotas quotas;
    private final Fanout fanout;
    private final BroadcastPublisher publisher;
    private final Clock clock;

    /**
     * @param fanout delivers to this replica's members and replays its history
     * @param publisher sends to the other replicas
     */
    public Broadcasts(
            PrivateChannels privateChannels,
            ProjectQuotas quotas,
            Fanout fanout,
            BroadcastPublisher publisher,
            Clock clock) {
        this.privateChannels = privateChannels;
        this.quotas = quotas;
        this.fanout = fanout;
        this.publisher = publisher;
        this.clock = clock;
    }

    /**
     * A client's {@code broadcast} push, admitted by the connection's event rate.
     *
     * @param close closes the channel with a {@code system} error (the project's message rate is spent)
     */
    public void push(BroadcastMember m, PhoenixMessage.BroadcastPush b, Consumer<String> close) {
        UserBroadcast message = b.broadcast();
        int maxPayload = quotas.quota(m.projectId()).maxPayloadBytes();
        if (message.payload().length > maxPayload) {
            if (m.ack() && b.ref() != null) {
                m.reply(b.ref(), "error", Replies.reason(Reasons.payloadTooLarge(maxPayload)));
            }
            return;
        }
        if (message.json() && WireJson.deeperThan(message.payload(), WireJson.MAX_VALUE_NESTING)) {
            // what the pipeline cannot carry is refused here, with a reply (docs/design.md C13)
            if (b.ref() != null) {
                m.reply(b.ref(), "error", Replies.reason(Reasons.PAYLOAD_TOO_DEEP));
            }
            return;
        }
        if (!quotas.tryMessage(m.projectId(), message.payload().length)) {
            close.accept(Reasons.PROJECT_TOO_MANY_MESSAGES);
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

    private void send(BroadcastMember m, PhoenixMessage.BroadcastPush b) {
        if (!m.active()) {
            return;
        }
        UserBroadcast message = b.broadcast().withId(MessageIds.next(clock.millis()));
        fanout.broadcastLocal(m.projectId(), m.channelKey(), message, m.self() ? null : m.recipient());
        publisher.publish(m.projectId(), m.channelKey(), message);
        if (m.ack() && b.ref() != null) {
            m.reply(b.ref(), "ok", Replies.empty());
        }
    }

    /** A private channel's write check refused a client event: the reply when it has a ref, else a system error. */
    public static void refuse(BroadcastMember m, String ref, String refusal) {
        if (!m.active()) {
            return;
        }
        if (ref != null) {
            m.reply(ref, "error", Replies.reason(refusal));
        } else {
            m.push("system", SystemMessages.error(SystemMessages.EXT_SYSTEM, refusal, m.channelName()));
        }
    }

    /**
     * History after a join's ok reply (realtime-js drops channel pushes before it):
     * {@code config.broadcast.replay} (a private channel's from the project's messages table,
     * durable and cluster-wide, H2; a public one's from this replica's history), and the SSE
     * endpoint's {@code Last-Event-ID}.
     *
     * @param replay {@code config.broadcast.replay}, or null
     * @param lastEventId the SSE join's {@code Last-Event-ID}, or null
     */
    public void replay(BroadcastMember m, JoinConfig.Replay replay, String lastEventId) {
        if (replay != null && m.isPrivate()) {
            privateChannels.replay(m, replay.sinceMs(), replay.limit());
        } else if (replay != null) {
            fanout.replaySince(m, replay.sinceMs(), replay.limit());
        }
        if (lastEventId != null) {
            fanout.resume(m, lastEventId);
        }
    }
}
