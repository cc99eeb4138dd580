package dev.aura.realtime.front.fanout;

import dev.aura.realtime.front.protocol.OutFrame;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * One message's frames for many subscribers, each subscriber with its own frame (a change event:
 * the frame names the subscriber's matched binding ids), grouped by event loop and handed to each
 * loop's {@link LoopOutbox} as one item: a fan-out to N sockets on L loops costs L queue items, and
 * each loop then writes the shared frames to its own sockets (docs/design.md D8). Broadcasts, one
 * frame per framing for a whole channel, use {@link BroadcastItem} instead.
 *
 * <p>A subscriber that already got the message from history by a resume ({@link Subscriber#resumed})
 * and a channel closed meanwhile ({@link Subscriber#active}) are skipped at write time, on the
 * subscriber's event loop.
 *
 * <p>Reference counts: frames passed to {@link #own} belong to the batch until {@link #close};
 * {@link #dispatch} gives every loop's item a reference of its own to each of them, and each
 * socket gets its own view of the bytes ({@link OutFrame#retainedWire}). Not thread-safe: build on
 * one thread, {@link #dispatch} once, then {@link #close}.
 */
final class DeliveryBatch implements AutoCloseable {
    private final String messageId;
    private final String changeId;
    private final int expected;
    private final List<OutFrame> owned = new ArrayList<>(4);
    private final Map<EventLoop, Group> byLoop = new IdentityHashMap<>(4);
    private Group last;

    /**
     * @param messageId the broadcast's message id, or null (changes, broadcasts without id)
     * @param expected how many subscribers are likely (sizes the first loop's arrays)
     */
    DeliveryBatch(String messageId, int expected) {
        this(messageId, null, expected);
    }

    /**
     * @param changeId a change event's id: each subscriber is told once its frame was written
     *     ({@link Subscriber#changeWritten}, resume records), or null
     */
    DeliveryBatch(String messageId, String changeId, int expected) {
        this.messageId = messageId;
        this.changeId = changeId;
        this.expected = expected;
    }

    /** A frame built for this message; the batch releases it on {@link #close}. */
    OutFrame own(OutFrame frame) {
        owned.add(frame);
        return frame;
    }

    /** {@code subscriber} gets {@code frame} (one of the frames passed to {@link #own}). */
    void add(Subscriber subscriber, OutFrame frame) {
        EventLoop loop = subscriber.recipient().eventLoop();
        Group g = last;
        if (g == null || g.loop != loop) {
            g = byLoop.computeIfAbsent(loop, l -> new Group(l, byLoop.isEmpty() ? expected : 16));
            last = g;
        }
        g.subscribers.add(subscriber);
        g.frames.add(frame);
    }

    boolean isEmpty() {
        return byLoop.isEmpty();
    }

    /** Queues one item per event loop with subscribers. */
    void dispatch(Function<EventLoop, LoopOutbox> outboxes) {
        for (Group g : byLoop.values()) {
            for (OutFrame f : owned) {
                f.retain();
            }
            outboxes.apply(g.loop)
                    .submit(new Item(
                            g.subscribers.toArray(Subscriber[]::new),
                            g.frames.toArray(OutFrame[]::new),
                            List.copyOf(owned),
                            messageId,
                            changeId));
        }
        byLoop.clear();
        last = null;
    }

    /** Releases the batch's own references (the queued items hold theirs). */
    @Override
    public void close() {
        owned.forEach(OutFrame::release);
        owned.clear();
    }

    private static final class Group {
        final EventLoop loop;
        final List<Subscriber> subscribers;
        final List<OutFrame> frames;

        Group(EventLoop loop, int capacity) {
            this.loop = loop;
            this.subscribers = new ArrayList<>(capacity);
            this.frames = new ArrayList<>(capacity);
        }
    }

    /** One loop's share of the message: its subscribers, each with its frame. */
    static final class Item extends LoopOutbox.Item {
        private final Subscriber[] subscribers;
        private final OutFrame[] frames;
        private final List<OutFrame> owned;
        private final String messageId;
        private final String changeId;
        private final long bytes;
        /** Loop only: the next subscriber to write to. */
        private int next;

        Item(Subscriber[] subscribers, OutFrame[] frames, List<OutFrame> owned, String messageId, String changeId) {
            this.subscribers = subscribers;
            this.frames = frames;
            this.owned = owned;
            this.messageId = messageId;
            this.changeId = changeId;
            long b = 16L * subscribers.length;
            for (OutFrame f : owned) {
                b += f.size();
            }
            this.bytes = b;
        }

        @Override
        long bytes() {
            return bytes;
        }

        @Override
        boolean run(LoopOutbox outbox, long deadline) {
            int start = next;
            for (; next < subscribers.length; next++) {
                if (outbox.outOfTime(start, next, deadline)) {
                    return false;
                }
                Subscriber s = subscribers[next];
                if (!s.active() || (messageId != null && s.resumed(messageId))) {
                    continue;
                }
                if (s.recipient().writeShared(frames[next])) {
                    outbox.countWrite();
                    if (changeId != null) {
                        s.changeWritten(changeId);
                    }
                }
            }
            release();
            return true;
        }

        @Override
        int shed() {
            int closed = 0;
            for (; next < subscribers.length; next++) {
                Subscriber s = subscribers[next];
                if (s.active() && s.recipient().shed()) {
                    closed++;
                }
            }
            release();
            return closed;
        }

        @Override
        void discard() {
            release();
        }

        private void release() {
            owned.forEach(OutFrame::release);
        }
    }
}
