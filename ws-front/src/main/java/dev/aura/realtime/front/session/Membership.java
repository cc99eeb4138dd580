package dev.aura.realtime.front.session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.auth.Claims;
import dev.aura.realtime.front.fanout.PostgresBinding;
import dev.aura.realtime.front.fanout.Subscriber;
import dev.aura.realtime.front.presence.PresenceMember;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Topics;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ScheduledFuture;

/**
 * One joined channel of one connection (Phoenix's channel process); the fan-out and presence see
 * it through their small interfaces. Identity fields are immutable and safe to read from any
 * thread; {@link #claims()} and {@link #active()} are volatile; the expiry timer and the resumed
 * ids are event-loop confined.
 */
public final class Membership implements Subscriber, PresenceMember {
    /** {@link #config()} of the channels without a presence key; shared, never modified. */
    private static final JsonNode PRESENCE_OFF = presenceConfig(false, "");

    private static final JsonNode PRESENCE_ON = presenceConfig(true, "");

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
    private Set<String> resumedIds;
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
        this.config = extensionConfig(config);
        this.bindings = List.copyOf(bindings);
        this.claims = claims;
        this.accessToken = accessToken;
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
     * The join's {@code config} as extensions read it: only {@code config.presence.enabled} and
     * {@code config.presence.key} (as boolean and text). Keeping the whole join config cost about a
     * kilobyte of heap per channel; channels without a presence key share one read-only node.
     */
    @Override
    public JsonNode config() {
        return config;
    }

    private static JsonNode extensionConfig(JsonNode config) {
        JsonNode presence = config.path("presence");
        boolean enabled = presence.path("enabled").asBoolean(false);
        JsonNode key = presence.path("key");
        String keyText = key.isValueNode() && !key.isNull() ? key.asText() : "";
        if (keyText.isEmpty()) {
            return enabled ? PRESENCE_ON : PRESENCE_OFF;
        }
        return presenceConfig(enabled, keyText);
    }

    private static JsonNode presenceConfig(boolean enabled, String key) {
        ObjectNode config = JsonNodeFactory.instance.objectNode();
        ObjectNode presence = config.putObject("presence").put("enabled", enabled);
        if (!key.isEmpty()) {
            presence.put("key", key);
        }
        return config;
    }

    @Override
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
}
