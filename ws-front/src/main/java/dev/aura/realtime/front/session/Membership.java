package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.front.fanout.ChannelKeys;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.presence.PresenceMember;
import dev.aura.realtime.front.protocol.JoinConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.resume.ResumableChannel;
import dev.aura.realtime.front.resume.ResumeState;
import io.netty.channel.ChannelFuture;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;

/**
 * One joined channel of one connection (Phoenix's channel process); the fan-out and presence see
 * it through their small interfaces. Identity fields are immutable and safe to read from any
 * thread; {@link #claims()} and {@link #active()} are volatile; the expiry timer and the resumed
 * ids are event-loop confined.
 *
 * <p>A private channel (docs/design.md H1) carries the result of its read check (broadcast and
 * presence read, volatile: the fan-out reads them) and, per extension, the cached result of its
 * write check with the client events waiting for the first one (event loop only).
 */
public final class Membership implements ResumableChannel, PresenceMember {
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
    private final String channelKey;
    private volatile boolean readBroadcast = true;
    private volatile boolean readPresence = true;
    /** Write check results by extension (event loop only); absent = not checked yet. */
    private final Map<String, Boolean> writes = new HashMap<>();
    /** Client events waiting for the first write check of their extension (event loop only). */
    private final Map<String, List<Runnable>> waiting = new HashMap<>();

    private volatile Claims claims;
    private volatile String accessToken;
    private volatile boolean active = true;
    private Set<String> resumedIds;
    private final ResumeState resume;
    ScheduledFuture<?> expiryTimer;

    Membership(
            ClientSession session,
            String topic,
            String joinRef,
            boolean self,
            boolean ack,
            JoinConfig.Presence presence,
            List<PostgresBinding> bindings,
            Claims claims,
            String accessToken,
            boolean privateChannel,
            String resumeKey) {
        this.session = session;
        this.topic = topic;
        this.channelName = topic.substring(Topics.PREFIX.length());
        this.projectId = claims.projectId();
        this.joinRef = joinRef;
        this.self = self;
        this.ack = ack;
        this.presence = presence;
        this.bindings = List.copyOf(bindings);
        this.claims = claims;
        this.accessToken = accessToken;
        this.privateChannel = privateChannel;
        this.channelKey = ChannelKeys.of(channelName, privateChannel);
        this.resume = new ResumeState(resumeKey);
    }

    /** {@code config.private}: joined after a read check; broadcasts and presence need write checks. */
    public boolean isPrivate() {
        return privateChannel;
    }

    @Override
    public String channelKey() {
        return channelKey;
    }

    @Override
    public boolean readsBroadcast() {
        return readBroadcast;
    }

    boolean readsPresence() {
        return readPresence;
    }

    /** Records a read check's result (at join and after a token refresh). */
    void readAccess(boolean broadcast, boolean presence) {
        this.readBroadcast = broadcast;
        this.readPresence = presence;
    }

    /** The cached write check of {@code extension}: null when not checked yet. Event loop only. */
    Boolean writeAccess(String extension) {
        return writes.get(extension);
    }

    /** Caches a write check; null forgets it (a new token). Event loop only. */
    void writeAccess(String extension, Boolean allowed) {
        if (allowed == null) {
            writes.remove(extension);
        } else {
            writes.put(extension, allowed);
        }
    }

    /** Bytes of the client events waiting for write checks (event loop only). */
    private long waitingBytes;

    /**
     * Queues a client event until the first write check of {@code extension} is answered.
     *
     * @param bytes the event's payload size, counted against {@code maxWaitingBytes}
     * @return 1 when this is the first waiting event (the caller starts the check), 0 when queued
     *     behind others, -1 when refused because the queue would exceed {@code maxWaitingBytes}
     */
    int awaitWrite(String extension, Runnable event, int bytes, long maxWaitingBytes) {
        if (waitingBytes + bytes > maxWaitingBytes) {
            return -1;
        }
        waitingBytes += bytes;
        List<Runnable> queue = waiting.computeIfAbsent(extension, k -> new ArrayList<>());
        queue.add(event);
        return queue.size() == 1 ? 1 : 0;
    }

    /** Events queued behind a write check, which the caller now runs. Event loop only. */
    List<Runnable> takeWaiting(String extension) {
        List<Runnable> queue = waiting.remove(extension);
        if (waiting.isEmpty()) {
            waitingBytes = 0;
        }
        return queue == null ? List.of() : queue;
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

    /** {@code config.broadcast.self}: the sender receives its own broadcasts. */
    public boolean self() {
        return self;
    }

    /** {@code config.broadcast.ack}: broadcasts are acknowledged with a reply. */
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
        if (readPresence || !presence.enabled()) {
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

    void claims(Claims newClaims, String token) {
        this.claims = newClaims;
        this.accessToken = token;
    }

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

    private volatile boolean eventIds;

    void eventIds(boolean on) {
        this.eventIds = on;
    }

    @Override
    public boolean wantsEventIds() {
        return eventIds;
    }
}
