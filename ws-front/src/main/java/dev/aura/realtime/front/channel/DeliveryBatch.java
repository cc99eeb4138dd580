package dev.aura.realtime.front.channel;

import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Delivers frames to many sessions with one task per event loop instead of one
 * {@code writeAndFlush} per socket. A cross-thread {@code writeAndFlush} costs a task and
 * possibly a selector wake-up per socket; fan-out of one broadcast to 5,000 sockets was bound by
 * that (docs/performance.md, figure 3). Here each event loop gets one task that writes every
 * frame of the batch to its sockets and then flushes each socket once.
 *
 * <p>Not thread-safe: build it on one thread, then {@link #dispatch()} once. Frames passed to
 * {@link #add} are owned by the batch (released if not written).
 */
final class DeliveryBatch {
    private final Map<EventLoop, List<Object>> byLoop = new IdentityHashMap<>();

    /** Adds one frame for one session (ownership of {@code frame} passes to the batch). */
    void add(ClientSession session, WebSocketFrame frame) {
        List<Object> items = byLoop.computeIfAbsent(session.eventLoop(), k -> new ArrayList<>());
        items.add(session);
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

    private static void write(List<Object> items) {
        Set<ClientSession> written = new LinkedHashSet<>();
        for (int i = 0; i < items.size(); i += 2) {
            ClientSession s = (ClientSession) items.get(i);
            if (s.writeNoFlush((WebSocketFrame) items.get(i + 1))) {
                written.add(s);
            }
        }
        written.forEach(ClientSession::flushNow);
    }

    private static void release(List<Object> items) {
        for (int i = 1; i < items.size(); i += 2) {
            ((WebSocketFrame) items.get(i)).release();
        }
    }
}
