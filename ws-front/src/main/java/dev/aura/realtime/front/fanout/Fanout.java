package dev.aura.realtime.front.fanout;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.DbBroadcast;
import dev.aura.realtime.common.wire.WireJson;
import dev.aura.realtime.front.history.HistoryStore;
import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.FanoutFrames;
import dev.aura.realtime.front.protocol.Framing;
import dev.aura.realtime.front.protocol.OutFrame;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.protocol.Topics;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.relay.RelayListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.channel.EventLoop;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers broadcasts and postgres changes to local channels (CDC status goes to {@link CdcHealth}), and replays broadcast
 * history to one channel. Each outgoing frame is built once per (channel, framing) — for changes
 * once per (channel, ids, framing) around a {@code data} object serialised once per event — as the
 * complete bytes of a server frame, and shared by reference between sockets.
 *
 * <p>Runs on the caller's thread (the relay's dispatcher or a sender's event loop); writes are
 * queued as one item per event loop on that loop's {@link LoopOutbox} ({@link BroadcastItem},
 * {@link DeliveryBatch} for changes),
 * which writes, flushes once per socket per turn and bounds the wait (docs/design.md D8), so a
 * slow recipient never blocks others and an overloaded loop sheds instead of queueing without end.
 */
public final class Fanout implements RelayListener {
    private static final Logger log = LoggerFactory.getLogger(Fanout.class);
    private static final Framing[] FRAMINGS = Framing.values();

    private final LocalTopics topics;
    private final FanoutFrames frames;
    private final ByteBufAllocator alloc;
    private final FrontMetrics metrics;
    private final Clock clock;
    private final HistoryStore history;
    private final QueueLimits queueLimits;
    private final LongSupplier nanoTime;
    private final Map<EventLoop, LoopOutbox> outboxes = new ConcurrentHashMap<>();
    private final CdcHealth cdc;

    public Fanout(
            LocalTopics topics,
            FanoutFrames frames,
            ByteBufAllocator alloc,
            FrontMetrics metrics,
            Clock clock,
            HistoryStore history,
            QueueLimits queueLimits,
            LongSupplier nanoTime,
            CdcHealth cdc) {
        this.topics = topics;
        this.frames = frames;
        this.alloc = alloc;
        this.metrics = metrics;
        this.clock = clock;
        this.history = history;
        this.queueLimits = queueLimits;
        this.nanoTime = nanoTime;
        this.cdc = cdc;
    }

    /** The write path of an event loop (one per loop, created on first use). Any thread. */
    public LoopOutbox outbox(EventLoop loop) {
        LoopOutbox o = outboxes.get(loop);
        return o != null ? o : outboxes.computeIfAbsent(loop, l -> new LoopOutbox(l, queueLimits, metrics, nanoTime));
    }

    /**
     * Sends a broadcast to the local members of a channel and records it in the history (also
     * when no local member is joined: history outlives membership, see {@link HistoryStore}).
     * Members of a private channel without broadcast read get nothing (docs/design.md H1).
     *
     * @param channel the channel's {@link ChannelKeys key}
     * @param exclude the sender's connection when it must not receive its own message, else null
     */
    public void broadcastLocal(String projectId, String channel, UserBroadcast message, Recipient exclude) {
        history.add(projectId, channel, message, clock.millis());
        LocalTopics.Shard[] shards = topics.shards(projectId, channel);
        if (shards == null) {
            return;
        }
        OutFrame[] byFraming = new OutFrame[Framing.values().length];
        try {
            for (LocalTopics.Shard shard : shards) {
                for (Framing framing : FRAMINGS) {
                    int f = framing.ordinal();
                    if (shard.framings()[f] && byFraming[f] == null) {
                        byFraming[f] = frames.broadcast(
                                Topics.PREFIX + ChannelKeys.name(channel), message, framing, false, alloc);
                    }
                }
            }
            for (LocalTopics.Shard shard : shards) {
                outbox(shard.loop()).submit(new BroadcastItem(shard.subscribers(), byFraming, exclude, message.id()));
            }
        } finally {
            for (OutFrame frame : byFraming) {
                if (frame != null) {
                    frame.release();
                }
            }
        }
    }

    /**
     * {@code config.broadcast.replay}: sends the channel's history broadcasts sent at or after
     * {@code sinceMs} to one member, the newest {@code limit} of them (at most
     * {@code HISTORY_SIZE}), oldest first, as replayed broadcasts ({@code meta.replayed = true}).
     * Call on the member's event loop after its join reply (realtime-js drops channel pushes before
     * it). A broadcast arriving between the member's activation and this snapshot may come twice;
     * {@code meta.id} tells them apart.
     */
    public void replaySince(Subscriber s, long sinceMs, int limit) {
        int capped = Math.min(limit, Math.max(1, history.perChannel()));
        for (HistoryStore.Entry e : history.since(s.projectId(), s.channelKey(), sinceMs, capped, clock.millis())) {
            replay(s, e.message());
        }
    }

    /**
     * SSE {@code Last-Event-ID}: sends one member the channel's history broadcasts after the one
     * with id {@code lastEventId}, oldest first, as replayed broadcasts; their live copies still
     * in flight are then skipped ({@link Subscriber#markResumed}). When that id is no longer in
     * history the member gets a {@code reset} push instead: it cannot know what it missed. Call on
     * the member's event loop after its join reply.
     */
    public void resume(Subscriber s, String lastEventId) {
        Optional<List<HistoryStore.Entry>> missed =
                history.after(s.projectId(), s.channelKey(), lastEventId, clock.millis());
        if (missed.isEmpty()) {
            ObjectNode reset = JsonNodeFactory.instance.objectNode();
            reset.put("reason", Reasons.HISTORY_GAP);
            reset.put("last_event_id", lastEventId);
            s.push("reset", reset);
            return;
        }
        for (HistoryStore.Entry e : missed.get()) {
            if (replay(s, e.message())) {
                s.markResumed(e.message().id());
            }
        }
    }

    /**
     * Sends one stored broadcast to one member as replayed ({@code meta.replayed}); false when it
     * has no form in the member's framing. Any thread.
     */
    public boolean replay(Subscriber s, UserBroadcast message) {
        OutFrame frame = frames.broadcast(s.topic(), message, s.recipient().framing(), true, alloc);
        if (frame == null) {
            return false;
        }
        try {
            s.recipient().deliver(frame);
        } finally {
            frame.release();
        }
        return true;
    }

    @Override
    public void onBroadcast(String projectId, String channel, UserBroadcast message) {
        broadcastLocal(projectId, channel, message, null);
    }

    /**
     * A row of the project's messages table (docs/design.md H2): a {@code private} row reaches the
     * private channel of its topic (members with broadcast read), any other the public channel;
     * {@code meta.id} is the row's id. A {@code binary_payload} row goes out as a binary broadcast.
     */
    @Override
    public void onDbBroadcast(String projectId, DbBroadcast message) {
        String event = message.event() == null ? "" : message.event();
        // send_binary: a binary frame to vsn 2.0.0 members; vsn 1.0.0 members get nothing (as Supabase)
        UserBroadcast b = message.binaryPayload() != null
                ? new UserBroadcast(event, message.binaryPayload(), false, message.id())
                : new UserBroadcast(
                        event,
                        message.payload() == null
                                ? "null".getBytes(StandardCharsets.UTF_8)
                                : WireJson.toBytes(message.payload()),
                        true,
                        message.id());
        broadcastLocal(projectId, ChannelKeys.of(message.topic(), message.privateChannel()), b, null);
    }

    @Override
    public void onChange(ChangeEvent event) {
        Map<Subscriber, Set<Integer>> groups = groups(event);
        if (groups.isEmpty()) {
            return;
        }
        for (java.util.Iterator<Subscriber> it = groups.keySet().iterator(); it.hasNext(); ) {
            if (it.next().holdChange(event)) {
                it.remove(); // held for a resume's replay, or already replayed
            }
        }
        if (!groups.isEmpty()) {
            deliver(event, groups);
        }
    }

    /** The local subscribers of a change and their matched binding ids. */
    private Map<Subscriber, Set<Integer>> groups(ChangeEvent event) {
        Map<Subscriber, Set<Integer>> groups = new LinkedHashMap<>();
        for (String subId : event.allowedSubIds()) {
            LocalTopics.BindingRef ref = topics.binding(subId);
            if (ref == null
                    || !ref.subscriber().active()
                    || !ref.subscriber().projectId().equals(event.projectId())) {
                continue;
            }
            groups.computeIfAbsent(ref.subscriber(), k -> new LinkedHashSet<>())
                    .add(ref.binding().id());
        }
        return groups;
    }

    /**
     * A resume's replayed or held change to one channel (docs/design.md R), written at once: call
     * on the channel's event loop. False when the channel has no binding the change lists.
     */
    public boolean deliverChange(Subscriber s, ChangeEvent event) {
        Set<Integer> ids = groups(event).get(s);
        if (ids == null) {
            return false;
        }
        Map<Subscriber, Set<Integer>> one = new LinkedHashMap<>();
        one.put(s, ids);
        deliver(event, one);
        return true;
    }

    private void deliver(ChangeEvent event, Map<Subscriber, Set<Integer>> groups) {
        ByteBuf data;
        ByteBuf withIds = null;
        try {
            data = frames.changeData(event.data());
        } catch (JsonProcessingException e) {
            LogCode.ChangeEncodeFailed.warn(log, "event {}: {}", event.eventId(), e.toString());
            return;
        }
        Map<String, OutFrame> cache = new HashMap<>();
        try (DeliveryBatch batch = new DeliveryBatch(null, event.eventId(), groups.size())) {
            for (Map.Entry<Subscriber, Set<Integer>> g : groups.entrySet()) {
                Subscriber s = g.getKey();
                Framing framing = s.recipient().framing();
                String ids = idsJson(g.getValue());
                ByteBuf body = data;
                if (s.wantsEventIds()) {
                    if (withIds == null) {
                        withIds = frames.changeData(EventIdField.added(event.data(), event.eventId()));
                    }
                    body = withIds;
                }
                ByteBuf chosen = body;
                OutFrame frame = cache.computeIfAbsent(
                        framing.name() + '\u0000' + s.topic() + '\u0000' + ids + (chosen == data ? "" : "\u0000id"),
                        k -> batch.own(frames.postgresChanges(s.topic(), ids, chosen, framing, alloc)));
                batch.add(s, frame);
            }
            batch.dispatch(this::outbox);
            metrics.changesDelivered(groups.size());
        } catch (JsonProcessingException e) {
            LogCode.ChangeEncodeFailed.warn(log, "event {}: {}", event.eventId(), e.toString());
        } finally {
            data.release();
            if (withIds != null) {
                withIds.release();
            }
        }
    }

    private static String idsJson(Set<Integer> ids) {
        StringBuilder sb = new StringBuilder("[");
        for (Integer id : ids) {
            if (sb.length() > 1) {
                sb.append(',');
            }
            sb.append(id.intValue());
        }
        return sb.append(']').toString();
    }

    /** Status messages are {@link CdcHealth}'s: this replica's delivery does not depend on them. */
    @Override
    public void onCdcStatus(CdcStatus status) {
        cdc.onStatus(status);
    }
}
