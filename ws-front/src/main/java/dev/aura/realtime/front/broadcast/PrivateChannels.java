package dev.aura.realtime.front.broadcast;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.ChannelAccess;
import dev.aura.realtime.front.fanout.Fanout;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.protocol.SystemMessages;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.relay.ChannelAccessClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Private channels (docs/design.md H1): the join's read check (or, for a public
 * join, the project's {@code private_only}), the write check before the first broadcast or track
 * of a private channel (cached for the membership; events arriving meanwhile wait, in order, up to
 * {@link #MAX_WAITING_BYTES}), the re-check after a new {@code access_token} (a lost read closes
 * the channel with Supabase's words), replay from the project's messages table and persisted
 * broadcasts. Every question goes to a cdc-worker ({@code ChannelAccessClient}); an unanswered or
 * failed one denies. Replica-wide; called on a channel's event loop, and the futures' callbacks
 * hop back onto it.
 */
public final class PrivateChannels {
    private static final Logger log = LoggerFactory.getLogger(PrivateChannels.class);
    /** Payload bytes of one channel's client events that may wait for a write check. */
    static final long MAX_WAITING_BYTES = 1 << 20;

    /** The join's verdict: {@code refusal} null when admitted. */
    public record Gate(String refusal, boolean readBroadcast, boolean readPresence) {}

    private final ChannelAccessClient access;
    private final PrivateOnlyCache privateOnly;
    private final Fanout fanout;
    private final ObjectMapper mapper;

    /**
     * @param access asks a cdc-worker (checks, replay, persist, the project's {@code private_only})
     * @param fanout delivers a private replay
     * @param mapper reads persisted JSON payloads
     */
    public PrivateChannels(ChannelAccessClient access, Fanout fanout, ObjectMapper mapper, Clock clock) {
        this.access = access;
        this.privateOnly = new PrivateOnlyCache(access, clock);
        this.fanout = fanout;
        this.mapper = mapper;
    }

    /** A private join's read check, or a public join's {@code private_only} check. Never fails. */
    public CompletableFuture<Gate> gate(String name, boolean privateChannel, Claims claims) {
        if (!privateChannel) {
            return privateOnly
                    .privateOnly(claims.projectId())
                    .thenApply(only -> only ? new Gate(Reasons.PRIVATE_ONLY, false, false) : new Gate(null, true, true))
                    .exceptionally(e -> new Gate(null, true, true));
        }
        return ask(ChannelAccess.Request.read(claims.projectId(), name, claims.role(), claims.json()))
                .thenApply(reply -> {
                    if (reply.error() != null) {
                        return new Gate(reply.error(), false, false);
                    }
                    privateOnly.learn(claims.projectId(), reply.privateOnly());
                    if (!reply.readBroadcast() && !reply.readPresence()) {
                        return new Gate(Reasons.cannotRead(name), false, false);
                    }
                    return new Gate(null, reply.readBroadcast(), reply.readPresence());
                });
    }

    /**
     * Runs {@code event} once {@code m} may write {@code extension} (at once on a public channel or
     * a cached yes), else {@code denied} with the refusal. The first event of a private channel asks
     * the cdc-worker; events arriving meanwhile wait in order.
     */
    public void whenWritable(BroadcastMember m, String extension, int bytes, Runnable event, Consumer<String> denied) {
        if (!m.isPrivate()) {
            event.run();
            return;
        }
        PrivateAccess state = m.access();
        Boolean cached = state.write(extension);
        if (cached != null) {
            if (cached) {
                event.run();
            } else {
                denied.accept(Reasons.cannotWrite(m.channelName()));
            }
            return;
        }
        Runnable gated = () -> {
            if (Boolean.TRUE.equals(state.write(extension))) {
                event.run();
            } else {
                denied.accept(Reasons.cannotWrite(m.channelName()));
            }
        };
        int queued = state.awaitWrite(extension, gated, bytes, MAX_WAITING_BYTES);
        if (queued < 0) {
            denied.accept(Reasons.WRITE_CHECK_PENDING);
            return;
        }
        if (queued == 0) {
            return; // the check is already on its way
        }
        Claims c = m.claims();
        ask(ChannelAccess.Request.write(m.projectId(), m.channelName(), c.role(), c.json(), extension))
                .thenAccept(reply -> onLoop(m, () -> {
                    if (!m.active()) {
                        return;
                    }
                    state.write(extension, reply.error() == null && reply.write());
                    for (Runnable r : state.takeWaiting(extension)) {
                        r.run();
                    }
                }));
    }

    /**
     * After a new {@code access_token}: the cached write checks are forgotten and the read check
     * runs again; a member that lost a read it had, or whose check could not run (errors deny), is
     * handed to {@code lost} with Supabase's refusal (the channel layer closes it).
     */
    public void recheck(BroadcastMember m, Consumer<String> lost) {
        if (!m.isPrivate()) {
            return;
        }
        PrivateAccess state = m.access();
        state.write("broadcast", null);
        state.write("presence", null);
        Claims c = m.claims();
        boolean hadBroadcast = state.readsBroadcast();
        boolean hadPresence = state.readsPresence();
        gate(m.channelName(), true, c)
                .thenAccept(g -> onLoop(m, () -> {
                    if (!m.active() || m.claims() != c) {
                        return; // closed, or another token arrived meanwhile (its own re-check decides)
                    }
                    boolean lostRead = g.refusal() != null
                            || (hadBroadcast && !g.readBroadcast())
                            || (hadPresence && !g.readPresence());
                    if (lostRead) {
                        lost.accept(Reasons.cannotRead(m.channelName()));
                    } else {
                        // a broadcast read gained now counts; presence follows the join's (its
                        // state and diffs start at join)
                        state.read(g.readBroadcast(), hadPresence);
                    }
                }));
    }

    /**
     * {@code config.broadcast.replay} of a private channel: the project's stored messages of the
     * topic since {@code sinceMs} that the member may read, the newest {@code limit} (at most 25),
     * oldest first in commit order, each with {@code meta.replayed} and {@code meta.id}. A replay
     * that cannot be served is told as a {@code system} error.
     */
    void replay(BroadcastMember m, long sinceMs, int limit) {
        Claims c = m.claims();
        int capped = Math.min(limit, ChannelAccess.MAX_REPLAY_LIMIT);
        ask(ChannelAccess.Request.replay(m.projectId(), m.channelName(), c.role(), c.json(), sinceMs, capped))
                .thenAccept(reply -> onLoop(m, () -> {
                    if (!m.active()) {
                        return;
                    }
                    if (reply.error() != null) {
                        m.push(
                                "system",
                                SystemMessages.error(SystemMessages.EXT_SYSTEM, reply.error(), m.channelName()));
                        return;
                    }
                    for (ChannelAccess.Message msg : reply.messages()) {
                        // a binary message has no vsn 1.0.0 form and is left out there (as Supabase)
                        UserBroadcast b = msg.binaryPayload() != null
                                ? new UserBroadcast(msg.event(), msg.binaryPayload(), false, msg.id())
                                : new UserBroadcast(
                                        msg.event(),
                                        msg.payload() == null
                                                ? "null".getBytes(StandardCharsets.UTF_8)
                                                : dev.aura.realtime.common.wire.WireJson.toBytes(msg.payload()),
                                        true,
                                        msg.id());
                        fanout.replay(m, b);
                    }
                    if (reply.truncated()) {
                        m.push(
                                "system",
                                SystemMessages.error(
                                        SystemMessages.EXT_SYSTEM, Reasons.REPLAY_TRUNCATED, m.channelName()));
                    }
                }));
    }

    /**
     * {@code send({persist: true})} on a private channel: the message is stored under the member's
     * role (the insert policy is the write check) and reaches the channel from the database, like
     * Broadcast from Database, with the row's id. With {@code ack} the reply follows the insert.
     */
    void persist(BroadcastMember m, PhoenixMessage.BroadcastPush b) {
        UserBroadcast message = b.broadcast();
        Claims c = m.claims();
        ChannelAccess.Request request;
        long ttlMs = b.persist().ttlMs();
        if (message.json()) {
            JsonNode payload;
            try {
                payload = mapper.readTree(message.payload());
            } catch (IOException e) {
                replyPersist(m, b, Reasons.malformed("persisted broadcast payload must be JSON"));
                return;
            }
            request = ChannelAccess.Request.persist(
                    m.projectId(), m.channelName(), c.role(), c.json(), message.event(), payload, ttlMs);
        } else {
            // a vsn 2.0.0 binary broadcast: stored in binary_payload
            request = ChannelAccess.Request.persistBinary(
                    m.projectId(), m.channelName(), c.role(), c.json(), message.event(), message.payload(), ttlMs);
        }
        ask(request).thenAccept(reply -> onLoop(m, () -> replyPersist(m, b, reply.error())));
    }

    /**
     * Answers a persisted broadcast: with {@code ack}, ok or the error (also as {@code error},
     * which realtime-js returns from {@code send}); without, an error as a {@code system} message.
     */
    void replyPersist(BroadcastMember m, PhoenixMessage.BroadcastPush b, String error) {
        if (error == null) {
            if (m.ack() && b.ref() != null) {
                m.reply(b.ref(), "ok", Replies.empty());
            }
            return;
        }
        if (b.ref() != null && m.ack()) {
            ObjectNode r = Replies.reason(error);
            r.put("error", error); // realtime-js returns response.error of a failed persisted send
            m.reply(b.ref(), "error", r);
        } else {
            m.push("system", SystemMessages.error(SystemMessages.EXT_SYSTEM, error, m.channelName()));
        }
    }

    /** Asks a cdc-worker; never fails (an unanswered question is {@link ChannelAccessClient#UNAVAILABLE}). */
    CompletableFuture<ChannelAccess.Reply> ask(ChannelAccess.Request request) {
        try {
            return access.ask(request).exceptionally(e -> ChannelAccess.Reply.failed(ChannelAccessClient.UNAVAILABLE));
        } catch (RuntimeException e) {
            return CompletableFuture.completedFuture(ChannelAccess.Reply.failed(ChannelAccessClient.UNAVAILABLE));
        }
    }

    /** Whether the project refuses public channels ({@link PrivateOnlyCache}). */
    CompletableFuture<Boolean> privateOnly(String projectId) {
        return privateOnly.privateOnly(projectId);
    }

    private static void onLoop(BroadcastMember m, Runnable step) {
        m.recipient().eventLoop().execute(() -> {
            try {
                step.run();
            } catch (RuntimeException e) {
                LogCode.HandlerFailed.warn(log, "private channel step on {}: {}", m.recipient(), e.toString(), e);
            }
        });
    }
}
