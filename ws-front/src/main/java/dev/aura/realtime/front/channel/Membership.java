package dev.aura.realtime.front.channel;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.front.broadcast.BroadcastMember;
import dev.aura.realtime.front.broadcast.PrivateAccess;
import dev.aura.realtime.front.fanout.ChannelKeys;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.presence.PresenceMember;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.resume.ResumableChannel;
import dev.aura.realtime.front.resume.ResumeState;
import dev.aura.realtime.front.session.ClientSession;
import io.netty.channel.ChannelFuture;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;

/**
 * One joined channel of one connection (Phoenix's channel process). The features see it through
 * their small interfaces: the fan-out as a {@code Subscriber}, broadcast and private channels as a
 * {@link BroadcastMember} (holding its {@link PrivateAccess}), presence as a {@link PresenceMember},
 * resume as a {@link ResumableChannel} (holding its {@link ResumeState}). Of the join's config it
 * keeps what the channel acts on. Identity fields are immutable and safe to read from any thread;
 * {@link #claims()} and {@link #active()} are volatile; the expiry timer and the resumed ids are
 * event-loop confined.
 */
public final class Membership implements BroadcastMember, PresenceMember, ResumableChannel {
    private final ClientSession session;
    private final String topic;
    private final String channelName;
    private final String projectId;
    private final String joinRef;
    private final boolean self;
    private final boolean ack;
    private final JoinConfig.Presence presence;
    private final List<PostgresBinding> bindings;
    private final boolean privateChannel;
    private final boolean eventIds;
    private final String channelKey;
    private final PrivateAccess access = new PrivateAccess();
    private final ResumeState resume;

    private volatile Claims claims;
    private volatile String accessToken;
    private volatile boolean active = true;
    private Set<String> resumedIds;
    private ScheduledFuture<?> expiryTimer;

    /**
     * @param config the join's config
     * @param bindings the distinct bindings with their sub ids
     * @param claims the join's claims (its {@code access_token}'s, else the connection's apikey's)
     */
    Membership(
            ClientSession session,
            String topic,
            String joinRef,
            JoinConfig config,
            List<PostgresBinding> bindings,
            Claims claims) {
        this.session = session;
        this.topic = topic;
        this.channelName = topic.substring(Topics.PREFIX.length());
        this.projectId = claims.projectId();
        this.joinRef = joinRef;
        this.self = config.broadcast().self();
        this.ack = config.broadcast().ack();
        this.presence = config.presence();
        this.bindings = List.copyOf(bindings);
        this.privateChannel = config.privateChannel();
        this.eventIds = config.postgresChangesOptions().eventId();
        this.claims = claims;
        this.accessToken = config.accessToken();
        this.channelKey = ChannelKeys.of(channelName, privateChannel);
        this.resume = new ResumeState(config.postgresChangesOptions().resumeKey());
    }

    @Override
    public boolean isPrivate() {
        return privateChannel;
    }

    @Override
    public String channelKey() {
        return channelKey;
    }

    @Override
    public PrivateAccess access() {
        return access;
    }

    @Override
    public boolean readsBroadcast() {
        return access.readsBroadcast();
    }

    /** The connection this channel belongs to. */
    @Override
    public ClientSession recipient() {
        return session;
    }

    /** Full topic, e.g. {@code realtime:room-1}. */
    @Override
    public String topic() {
        return topic;
    }

    /** Topic without {@code realtime:}; the name in NATS subjects and system messages. */
    @Override
    public String channelName() {
        return channelName;
    }

    @Override
    public String projectId() {
        return projectId;
    }

    public String joinRef() {
        return joinRef;
    }

    @Override
    public boolean self() {
        return self;
    }

    @Override
    public boolean ack() {
        return ack;
    }

    /**
     * The join's {@code config.presence}. Only it is kept of the join's config (the whole config
     * cost about a kilobyte of heap per channel). A private member without presence read sees
     * {@code enabled} false, so it gets no {@code presence_state} and no diffs (docs/design.md H1).
     */
    @Override
    public JoinConfig.Presence presence() {
        if (access.readsPresence() || !presence.enabled()) {
            return presence;
        }
        return presence.key().isEmpty() ? JoinConfig.Presence.OFF : new JoinConfig.Presence(false, presence.key());
    }

    @Override
    public List<PostgresBinding> bindings() {
        return bindings;
    }

    @Override
    public Claims claims() {
        return claims;
    }

    /** A new {@code access_token}: the claims the channel acts under from now on. */
    void claims(Claims newClaims, String token) {
        this.claims = newClaims;
        this.accessToken = token;
    }

    /** The token of {@link #claims()}, or null (the connection's apikey). */
    String accessToken() {
        return accessToken;
    }

    @Override
    public boolean active() {
        return active;
    }

    void deactivate() {
        active = false;
    }

    /** The token expiry timer; replaces (and cancels) the previous one. Event loop only. */
    void expiry(ScheduledFuture<?> timer) {
        cancelExpiry();
        expiryTimer = timer;
    }

    void cancelExpiry() {
        if (expiryTimer != null) {
            expiryTimer.cancel(false);
        }
    }

    /** Sends a server push on this channel with its join ref. Any thread. */
    @Override
    public void push(String event, JsonNode payload) {
        session.send(new PhoenixMessage.Push(joinRef, null, topic, event, payload));
    }

    /** Replies to a client push on this channel. Any thread. */
    @Override
    public void reply(String ref, String status, JsonNode response) {
        session.send(new PhoenixMessage.Reply(joinRef, ref, topic, status, response));
    }

    @Override
    public void markResumed(String messageId) {
        if (resumedIds == null) {
            resumedIds = new HashSet<>();
        }
        resumedIds.add(messageId);
    }

    @Override
    public boolean resumed(String messageId) {
        return resumedIds != null && resumedIds.contains(messageId);
    }

    /** The channel's resume state (docs/design.md R). */
    @Override
    public ResumeState resume() {
        return resume;
    }

    @Override
    public ChannelFuture writeBarrier() {
        return session.writeBarrier();
    }

    @Override
    public boolean holdChange(ChangeEvent event) {
        return resume.hold(event);
    }

    @Override
    public void changeWritten(String eventId) {
        resume.written(eventId);
    }

    /** {@code postgres_changes_options.event_id}: records carry {@code _aura_event_id}. */
    @Override
    public boolean wantsEventIds() {
        return eventIds;
    }
}
