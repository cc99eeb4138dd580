package dev.aura.realtime.front.fanout;

import io.netty.buffer.ByteBufHolder;
import io.netty.channel.EventLoop;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Delivers one message's frames to many subscribers with one task per event loop instead of one
 * {@code writeAndFlush} per socket. A cross-thread {@code writeAndFlush} costs a task and
 * possibly a selector wake-up per socket; fan-out of one broadcast to 5,000 sockets was bound by
 * that (docs/performance.md, figure 3). Here each event loop gets one task that writes every
 * frame of the batch to its sockets and then flushes each socket once.
 *
 * <p>A subscriber that already got the message from history by a resume ({@link Subscriber#resumed})
 * is skipped at write time, on its event loop, where the resume ran.
 *
 * <p>Not thread-safe: build it on one thread, then {@link #dispatch()} once. Frames passed to
 * {@link #add} are owned by the batch (released if not written).
 */
final class DeliveryBatch {
    private final String messageId;
    private final Map<EventLoop, List<Object>> byLoop = new IdentityHashMap<>();

    /** @param messageId the broadcast's message id, or null (changes, broadcasts without id) */
    DeliveryBatch(String messageId) {
        this.messageId = messageId;
    }

    /** Adds one frame for one subscriber (ownership of {@code frame} passes to the batch). */
    void add(Subscriber subscriber, ByteBufHolder frame) {
        List<Object> items = byLoop.computeIfAbsent(subscriber.recipient().eventLoop(), k -> new ArrayList<>());
        items.add(subscriber);
        items.add(frame);
    }

    /** Runs the writes: inline for the caller's own event loop, one task for each other loop. */
    void dispatch() {
        for (Map.Entry<EventLoop, List<Object>> e : byLoop.entrySet()) {
            EventLoop loop = e.getKey();
            List<Object> items = e.getValue();
            if (loop.inEventLoop()) {
                write(items);
            } else {
                try {
                    loop.execute(() -> write(items));
                } catch (RuntimeException rejected) {
                    release(items); // the loop is shutting down: its sockets are closing anyway
                }
            }
        }
        byLoop.clear();
    }

    /** Releases frames never dispatched (an exception between {@link #add} and {@link #dispatch}). */
    void discard() {
        byLoop.values().forEach(DeliveryBatch::release);
        byLoop.clear();
    }

    private void write(List<Object> items) {
        Set<Recipient> written = new LinkedHashSet<>();
        for (int i = 0; i < items.size(); i += 2) {
            Subscriber s = (Subscriber) items.get(i);
            ByteBufHolder frame = (ByteBufHolder) items.get(i + 1);
            if (messageId != null && s.resumed(messageId)) {
                frame.release();
            } else if (s.recipient().writeNoFlush(frame)) {
                written.add(s.recipient());
            }
        }
        written.forEach(Recipient::flushNow);
    }

    private static void release(List<Object> items) {
        for (int i = 1; i < items.size(); i += 2) {
            ((ByteBufHolder) items.get(i)).release();
        }
    }
}
