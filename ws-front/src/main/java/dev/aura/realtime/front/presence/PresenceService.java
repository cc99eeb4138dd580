package dev.aura.realtime.front.presence;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.front.config.PresenceConfig;
import dev.aura.realtime.front.protocol.PhoenixMessage;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Replies;
import dev.aura.realtime.front.relay.BucketLedger;
import io.nats.client.Connection;
import java.time.Clock;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Presence on the JetStream KV bucket {@code aura_presence} (docs/design.md D5): {@code track} puts
 * this membership's entry, {@code untrack} and leaving delete it; every replica watches the
 * bucket and turns changes into {@code presence_diff} pushes for its local channels that enabled
 * presence, which first get a {@code presence_state}.
 *
 * <p>Quota: a track charges its entry's stored bytes to the project's {@link BucketLedger}; one
 * that would put the project over its share of the bucket (across replicas) is refused with
 * {@link Reasons#presenceQuotaExceeded} and the previous state stays (docs/design.md D8).
 *
 * <p>Threads. Event loops call the {@link PresenceExtension} methods; they never block: KV
 * writes go to {@link PresenceKv} ({@code aura-presence-kv}), and the view, listeners and pushes
 * live on {@link PresenceFeed} ({@code aura-presence-view}). A membership's tracked state is
 * only touched by its connection's event loop.
 *
 * <p>Lifecycle: {@link #start} creates the bucket and the watch (blocking); after a NATS
 * reconnect {@link #onReconnect} re-creates the bucket if the restart lost it, re-puts every
 * live presence and re-watches; {@link #close} lets queued deletes finish (bounded) and stops
 * both threads. Idempotent.
 */
public final class PresenceService implements PresenceExtension, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(PresenceService.class);

    /** What one membership tracks; its key and member id stay fixed across re-tracks. */
    private static final class Tracked {
        final String key;
        final String member = UUID.randomUUID().toString();
        PresenceEntry entry;

        Tracked(String key) {
            this.key = key;
        }
    }

    /** The presence bucket's name, for its {@link BucketLedger}. */
    public static final String BUCKET = PresenceBucket.NAME;

    private final String instanceId;
    private final ObjectMapper mapper;
    private final BucketLedger ledger;
    private final BucketLedger.Shares shares;
    private final PresenceKv kv;
    private final PresenceFeed feed;
    private final Map<PresenceMember, Tracked> tracked = new ConcurrentHashMap<>();
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param ledger this replica's bytes per project in the bucket: a track charges its entry, an
     *     untrack or leave releases it
     * @param shares each project's share of the bucket and the other replicas' bytes of it
     */
    public PresenceService(
            Connection connection,
            PresenceConfig config,
            String instanceId,
            Clock clock,
            ObjectMapper mapper,
            BucketLedger ledger,
            BucketLedger.Shares shares) {
        this.instanceId = instanceId;
        this.mapper = mapper;
        this.ledger = ledger;
        this.shares = shares;
        this.feed = new PresenceFeed(clock, config.maxAge());
        this.kv = new PresenceKv(
                new PresenceBucket(connection, config.maxAge(), config.bucketMaxBytes(), mapper), feed, config, clock);
    }

    /** Creates the bucket when absent and starts watching it (blocking, at start-up). */
    public void start() throws Exception {
        kv.start();
    }

    /** After a NATS reconnect: re-create the bucket if needed, re-put, re-watch. Any thread. */
    public void onReconnect() {
        kv.resync();
    }

    @Override
    public void onJoined(PresenceMember m) {
        if (enabled(m)) {
            feed.listen(m);
        }
    }

    @Override
    public void onPresence(PresenceMember m, PhoenixMessage.PresencePush push) {
        String event = push.payload().path("event").asText("");
        switch (event) {
            case "track" -> track(m, push);
            case "untrack" -> {
                untrack(m);
                reply(m, push, "ok", Replies.empty());
            }
            default -> reply(m, push, "error", Replies.reason(Reasons.PRESENCE_UNKNOWN_EVENT));
        }
    }

    @Override
    public void onLeft(PresenceMember m) {
        feed.unlisten(m);
        untrack(m);
        tracked.remove(m);
    }

    private void track(PresenceMember m, PhoenixMessage.PresencePush push) {
        JsonNode meta = push.payload().get("payload");
        if (meta == null || !meta.isObject()) {
            reply(m, push, "error", Replies.reason(Reasons.PRESENCE_NOT_A_MAP));
            return;
        }
        Tracked t = tracked.computeIfAbsent(m, k -> new Tracked(presenceKey(m)));
        PresenceEntry previous = t.entry;
        PresenceEntry next = new PresenceEntry(
                m.projectId(),
                m.channelKey(),
                t.key,
                t.member,
                PresenceRefs.next(),
                previous == null ? null : previous.ref(),
                ((ObjectNode) meta).deepCopy(),
                instanceId);
        if (!charge(next)) {
            // the previous state (if any) stays tracked, as after a payload over the size limit
            reply(m, push, "error", Replies.reason(Reasons.presenceQuotaExceeded(shares.share(m.projectId()))));
            return;
        }
        t.entry = next;
        kv.put(t.entry);
        reply(m, push, "ok", Replies.empty());
    }

    /** Charges the entry's stored bytes to its project; false when the project's share has no room for it. */
    private boolean charge(PresenceEntry entry) {
        long valueBytes;
        try {
            valueBytes = mapper.writeValueAsBytes(entry).length;
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a presence entry is not serialisable", e);
        }
        String project = entry.projectId();
        return ledger.charge(
                project,
                entry.kvKey(),
                ledger.storedBytes(entry.kvKey(), valueBytes),
                shares.share(project) - shares.elsewhere(project));
    }

    private void untrack(PresenceMember m) {
        Tracked t = tracked.get(m);
        if (t != null && t.entry != null) {
            kv.delete(t.entry.kvKey());
            ledger.release(t.entry.projectId(), t.entry.kvKey());
            t.entry = null;
        }
    }

    private static void reply(PresenceMember m, PhoenixMessage.PresencePush push, String status, JsonNode response) {
        if (push.ref() != null) {
            m.reply(push.ref(), status, response);
        }
    }

    /**
     * {@code config.presence.enabled}, which realtime-js always sends (true when the channel has a
     * presence listener). Absent means off, as in current Supabase Realtime with the tenant flag
     * off: no {@code presence_state}, no diffs; tracking works either way.
     */
    static boolean enabled(PresenceMember m) {
        return m.presence().enabled();
    }

    /** {@code config.presence.key}, or a random key for this membership when empty (as Supabase does). */
    static String presenceKey(PresenceMember m) {
        String key = m.presence().key();
        return key.isEmpty() ? UUID.randomUUID().toString() : key;
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        kv.close();
        feed.close();
        log.info("presence stopped");
    }
}
