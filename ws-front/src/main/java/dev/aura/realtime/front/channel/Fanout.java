package dev.aura.realtime.front.channel;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.CdcStatus;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.front.history.HistoryStore;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.BroadcastFrames;
import dev.aura.realtime.front.protocol.JsonFrames;
import dev.aura.realtime.front.protocol.OutFrame;
import dev.aura.realtime.front.protocol.UserBroadcast;
import dev.aura.realtime.front.protocol.Vsn;
import dev.aura.realtime.front.relay.RelayListener;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Delivers broadcasts, postgres changes and CDC status to local channels. Each outgoing frame is
 * encoded once per (channel, vsn) — for changes once per (channel, ids, vsn) around a
 * {@code data} object serialised once per event — and shared by reference between sockets.
 *
 * <p>Runs on the caller's thread (the relay's dispatcher or a sender's event loop); writes are
 * queued onto each recipient's event loop by Netty, so a slow recipient never blocks others.
 */
public final class Fanout implements RelayListener {
    private static final Logger log = LoggerFactory.getLogger(Fanout.class);

    private final LocalTopics topics;
    private final BroadcastFrames broadcastFrames;
    private final JsonFrames json;
    private final ObjectMapper mapper;
    private final ByteBufAllocator alloc;
    private final FrontMetrics metrics;
    private final Clock clock;
    private final HistoryStore history;
    private volatile Boolean cdcActive;
    private volatile String cdcReason;
    /** When the last status message arrived (this replica's clock), 0 before the first. */
    private volatile long lastCdcStatusAtMs;

    private volatile String lastGapTo;

    /** With a default-bounded history of {@code topics.historySize()} messages per channel. */
    public Fanout(
            LocalTopics topics,
            BroadcastFrames broadcastFrames,
            JsonFrames json,
            ByteBufAllocator alloc,
            FrontMetrics metrics,
            Clock clock) {
        this(
                topics,
                broadcastFrames,
                json,
                alloc,
                metrics,
                clock,
                new HistoryStore(topics.historySize(), 10_000, 64L * 1024 * 1024, 600_000));
    }

    public Fanout(
            LocalTopics topics,
            BroadcastFrames broadcastFrames,
            JsonFrames json,
            ByteBufAllocator alloc,
            FrontMetrics metrics,
            Clock clock,
            HistoryStore history) {
        this.history = history;
        this.topics = topics;
        this.broadcastFrames = broadcastFrames;
        this.json = json;
        this.mapper = json.mapper();
        this.alloc = alloc;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** The broadcast history of every channel seen by this replica. */
    public HistoryStore history() {
        return history;
    }

    /**
     * Sends a broadcast to the local members of a channel and records it in the history (also
     * when no local member is joined: history outlives membership, see {@link HistoryStore}).
     *
     * @param exclude the sender's connection when it must not receive its own message, else null
     */
    public void broadcastLocal(String projectId, String channel, UserBroadcast message, ClientSession exclude) {
        history.add(projectId, channel, message, clock.millis());
        LocalTopics.TopicState state = topics.state(projectId, channel);
        if (state == null) {
            return;
        }
        OutFrame[] byVsn = new OutFrame[Vsn.values().length];
        boolean[] unrepresentable = new boolean[byVsn.length];
        DeliveryBatch batch = new DeliveryBatch();
        try {
            for (Membership m : state.members()) {
                if (!m.active() || m.session() == exclude) {
                    continue;
                }
                int v = m.session().vsn().ordinal();
                if (byVsn[v] == null && !unrepresentable[v]) {
                    byVsn[v] = broadcastFrames.encode(
                            m.topic(), message, m.session().vsn(), alloc);
                    unrepresentable[v] = byVsn[v] == null;
                }
                if (byVsn[v] != null) {
                    batch.add(m.session(), byVsn[v].retainedFrame());
                }
            }
            batch.dispatch();
        } finally {
            batch.discard();
            for (OutFrame f : byVsn) {
                if (f != null) {
                    f.release();
                }
            }
        }
    }

    /**
     * Sends history entries to one member, oldest first, as replayed broadcasts
     * ({@code meta.replayed = true}). Call on the member's event loop after its join reply.
     */
    public void replay(Membership m, List<HistoryStore.Entry> entries) {
        for (HistoryStore.Entry e : entries) {
            OutFrame frame =
                    broadcastFrames.encode(m.topic(), e.message(), m.session().vsn(), true, alloc);
            if (frame != null) {
                m.session().deliver(frame.retainedFrame());
                frame.release();
            }
        }
    }

    @Override
    public void onBroadcast(String projectId, String channel, UserBroadcast message) {
        broadcastLocal(projectId, channel, message, null);
    }

    @Override
    public void onChange(ChangeEvent event) {
        Map<Membership, Set<Integer>> groups = new LinkedHashMap<>();
        for (String subId : event.allowedSubIds()) {
            LocalTopics.BindingRef ref = topics.binding(subId);
            if (ref == null
                    || !ref.membership().active()
                    || !ref.membership().projectId().equals(event.projectId())) {
                continue;
            }
            groups.computeIfAbsent(ref.membership(), k -> new LinkedHashSet<>())
                    .add(ref.binding().id());
        }
        if (groups.isEmpty()) {
            return;
        }
        ByteBuf data;
        try {
            data = Unpooled.wrappedBuffer(mapper.writeValueAsBytes(event.data()));
        } catch (JsonProcessingException e) {
            log.warn("[ChangeEncodeFailed] event {}: {}", event.eventId(), e.toString());
            return;
        }
        Map<String, OutFrame> cache = new HashMap<>();
        DeliveryBatch batch = new DeliveryBatch();
        try {
            for (Map.Entry<Membership, Set<Integer>> g : groups.entrySet()) {
                Membership m = g.getKey();
                Vsn vsn = m.session().vsn();
                String ids = idsJson(g.getValue());
                OutFrame frame = cache.computeIfAbsent(
                        vsn.wire() + '\u0000' + m.topic() + '\u0000' + ids,
                        k -> new OutFrame(
                                json.encodeWithSharedPayload(
                                        vsn,
                                        m.topic(),
                                        "postgres_changes",
                                        "{\"ids\":" + ids + ",\"data\":",
                                        data,
                                        "}",
                                        alloc),
                                false));
                batch.add(m.session(), frame.retainedFrame());
            }
            batch.dispatch();
            metrics.changesDelivered(groups.size());
        } finally {
            batch.discard();
            cache.values().forEach(OutFrame::release);
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

    @Override
    public void onCdcStatus(CdcStatus status) {
        lastCdcStatusAtMs = clock.millis();
        applyCdcStatus(status.active(), status.reason(), status.gapTo());
    }

    /**
     * Declares CDC inactive when a cdc-worker was heard from once but has been silent for longer
     * than {@code timeoutMs} (the leader heartbeats every 5 s; a killed worker publishes no
     * inactive status of its own). Called periodically by {@link CdcWatchdog}.
     */
    public void checkCdcSilence(long timeoutMs) {
        long last = lastCdcStatusAtMs;
        long silentMs = clock.millis() - last;
        if (last == 0 || silentMs <= timeoutMs || Boolean.FALSE.equals(cdcActive)) {
            return;
        }
        applyCdcStatus(false, Reasons.cdcSilent(silentMs / 1000), null);
    }

    private synchronized void applyCdcStatus(boolean active, String reason, String gapTo) {
        Boolean previous = cdcActive;
        cdcReason = reason;
        cdcActive = active;
        boolean flippedDown = !active && !Boolean.FALSE.equals(previous);
        boolean recovered = active && Boolean.FALSE.equals(previous);
        // a lost slot is a gap clients must hear about even when CDC was already inactive (e.g.
        // "starting" after the worker restarted): an inactive status with a new gap is pushed too
        boolean newGap = !active && gapTo != null && !gapTo.equals(lastGapTo);
        if (gapTo != null) {
            lastGapTo = gapTo;
        }
        if (!flippedDown && !recovered && !newGap) {
            return;
        }
        log.info("CDC status changed to {} ({})", active ? "active" : "inactive", reason);
        List<Membership> affected = new ArrayList<>(topics.withPostgresBindings());
        for (Membership m : affected) {
            m.push(
                    "system",
                    recovered
                            ? SystemMessages.ok(SystemMessages.EXT_POSTGRES, Reasons.SUBSCRIBED, m.channelName())
                            : SystemMessages.error(SystemMessages.EXT_POSTGRES, inactiveMessage(), m.channelName()));
        }
    }

    /** False only when the last status said the cdc-worker is not active (unknown counts as active). */
    public boolean cdcKnownInactive() {
        return Boolean.FALSE.equals(cdcActive);
    }

    /** The message sent to postgres_changes subscribers while CDC is inactive. */
    public String inactiveMessage() {
        String reason = cdcReason;
        return reason == null || reason.isBlank() ? "CDC unavailable" : reason;
    }
}
