package dev.aura.realtime.front.channel;

import com.fasterxml.jackson.databind.JsonNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import java.util.List;
import java.util.concurrent.ScheduledFuture;

/**
 * One joined channel of one connection (Phoenix's channel process). Identity fields are
 * immutable and safe to read from any thread; {@link #claims()} and {@link #active()} are
 * volatile; the expiry timer is event-loop confined.
 */
public final class Membership {
    private final ClientSession session;
    private final String topic;
    private final String channelName;
    private final String projectId;
    private final String joinRef;
    private final boolean self;
    private final boolean ack;
    private final JsonNode config;
    private final List<PostgresBinding> bindings;
    private volatile Claims claims;
    private volatile String accessToken;
    private volatile boolean active = true;
    ScheduledFuture<?> expiryTimer;

    Membership(
            ClientSession session,
            String topic,
            String joinRef,
            boolean self,
            boolean ack,
            JsonNode config,
            List<PostgresBinding> bindings,
            Claims claims,
            String accessToken) {
        this.session = session;
        this.topic = topic;
        this.channelName = topic.substring(Topics.PREFIX.length());
        this.projectId = claims.projectId();
        this.joinRef = joinRef;
        this.self = self;
        this.ack = ack;
        this.config = config;
        this.bindings = List.copyOf(bindings);
        this.claims = claims;
        this.accessToken = accessToken;
    }

    public ClientSession session() {
        return session;
    }

    /** Full topic, e.g. {@code realtime:room-1}. */
    public String topic() {
        return topic;
    }

    /** Topic without {@code realtime:}; the name in NATS subjects and system messages. */
    public String channelName() {
        return channelName;
    }

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

    /** The join's {@code config} object, for extensions (presence). */
    public JsonNode config() {
        return config;
    }

    public List<PostgresBinding> bindings() {
        return bindings;
    }

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

    public boolean active() {
        return active;
    }

    void deactivate() {
        active = false;
    }

    /** Sends a server push on this channel with its join ref. Any thread. */
    public void push(String event, JsonNode payload) {
        session.send(new PhoenixMessage.Push(joinRef, null, topic, event, payload));
    }

    /** Replies to a client push on this channel. Any thread. */
    public void reply(String ref, String status, JsonNode response) {
        session.send(new PhoenixMessage.Reply(joinRef, ref, topic, status, response));
    }
}
