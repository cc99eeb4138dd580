package dev.aura.realtime.front.fanout;

import dev.aura.realtime.front.log.LogCode;
import dev.aura.realtime.front.metrics.FrontMetrics;
import dev.aura.realtime.front.protocol.OutFrame;
import io.netty.channel.EventLoop;
import io.netty.util.internal.PlatformDependent;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The write path of one event loop (docs/design.md D8): every message for its connections that
 * comes from another thread, and every flush, goes through here.
 *
 * <ul>
 *   <li><b>One queue per loop, one task at a time.</b> Other threads (the NATS relay, presence,
 *       other loops) {@link #submit} items to a lock-free queue; one drain task writes them in
 *       order. A fan-out costs one queue item per loop, not a task per socket, and everything one
 *       thread submits reaches each socket in submission order.
 *   <li><b>One flush per socket per turn.</b> Writes are not flushed one by one: a connection that
 *       was written to is flushed once when the drain ends (or after 128 writes), so the messages
 *       that arrived meanwhile leave in one {@code writev}; consecutive broadcasts to the same
 *       members are written socket by socket ({@link BroadcastItem.Run}). Under a burst the loop
 *       thereby catches up instead of paying a system call per message and socket. A drain writes
 *       for at most {@link #DRAIN_BUDGET_NANOS} before it flushes and yields to I/O (a fan-out to
 *       100,000 sockets spans several drains).
 *   <li><b>Bounded in time and bytes.</b> An item whose wait exceeded {@link QueueLimits#maxDelay}
 *       when its turn comes, or that would take the queued bytes past {@link QueueLimits#maxBytes},
 *       is not written: its recipients are closed ({@link Recipient#shed}) instead of being served
 *       ever later. They received everything before it; the close is their signal of the gap
 *       (docs/protocol.md section 5).
 * </ul>
 *
 * <p>An item whose writing throws (a bug) is not retried: the connections it had not reached yet
 * are closed like shed ones, so the failure is never a silent gap ({@code [DeliveryFailed]}).
 *
 * <p>Threads: {@link #submit} from any thread; everything else on the loop.
 */
public final class LoopOutbox {
    private static final Logger log = LoggerFactory.getLogger(LoopOutbox.class);
    /**
     * Longest a drain writes before it flushes and lets the loop do I/O. Long enough to take every
     * message that queued up during the previous drain (a flush costs a system call per socket, a
     * write a fraction of a microsecond, so writing k messages before flushing makes the loop about
     * k times faster when it has fallen behind); short enough that a fan-out to 100,000 sockets
     * still lets reads and timers run between its parts.
     */
    static final long DRAIN_BUDGET_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Writes between two looks at the clock inside a drain. */
    static final int CLOCK_EVERY = 64;

    private static final long LOG_EVERY_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A connection with writes waiting for a flush. */
    public interface Flushable {
        /** Marks the connection as written since its last flush; true when it was not marked yet. */
        boolean markUnflushed();

        /** Flushes the connection and clears the mark. */
        void flush();
    }

    private final EventLoop loop;
    private final QueueLimits limits;
    private final FrontMetrics metrics;
    private final LongSupplier nanoTime;
    private final Queue<Item> queue = PlatformDependent.newMpscQueue();
    private final AtomicLong queuedBytes = new AtomicLong();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();
    private final Runnable drainTask = this::drain;
    /** Loop only: connections written since the last flush. */
    private final List<Flushable> unflushed = new ArrayList<>();
    /** Loop only: the item a drain ran out of budget in. */
    private Item current;
    /** Loop only: writes since the metrics were last told. */
    private int written;

    private long lastLogNanos;
    private final AtomicLong shedSinceLog = new AtomicLong();

    LoopOutbox(EventLoop loop, QueueLimits limits, FrontMetrics metrics, LongSupplier nanoTime) {
        this.loop = loop;
        this.limits = limits;
        this.metrics = metrics;
        this.nanoTime = nanoTime;
        this.lastLogNanos = nanoTime.getAsLong() - LOG_EVERY_NANOS;
    }

    public EventLoop loop() {
        return loop;
    }

    /** Bytes queued now (shared frames once, plus 16 per recipient). */
    long queuedBytes() {
        return queuedBytes.get();
    }

    /** Queues an item for the loop (any thread); ownership of its frames passes here. */
    void submit(Item item) {
        long bytes = item.bytes();
        if (queuedBytes.addAndGet(bytes) > limits.maxBytes()) {
            queuedBytes.addAndGet(-bytes);
            int closed = item.shed();
            overloaded(closed, "the queue holds more than " + limits.maxBytes() + " bytes");
            return;
        }
        metrics.queuedBytes(bytes);
        item.queuedAt = nanoTime.getAsLong();
        queue.offer(item);
        scheduleDrain();
    }

    /**
     * Queues a shared frame for one connection of this loop (any thread; the caller keeps its
     * reference to {@code frame}).
     */
    public void submitWrite(Recipient recipient, OutFrame frame) {
        submit(new Write(recipient, frame));
    }

    /**
     * Queues a write that the connection's pipeline encodes (a reply or push from another thread);
     * {@code recipient} is closed instead when the write waits longer than the queue's bound.
     */
    public void submitTask(Recipient recipient, Runnable write) {
        submit(new Task(recipient, write));
    }

    /** A connection of this loop wrote without flushing: it is flushed when this turn's drain ends. Loop only. */
    public void flushLater(Flushable connection) {
        if (connection.markUnflushed()) {
            unflushed.add(connection);
            scheduleDrain();
        }
    }

    /** One write done by a connection of this loop (metrics, told once per drain). Loop only. */
    void countWrite() {
        written++;
    }

    /** The outbox's clock (System.nanoTime, or a test's). */
    long now() {
        return nanoTime.getAsLong();
    }

    /**
     * Whether an item that started its part of a drain at member {@code start} and is now at
     * {@code next} must yield: the clock is read every {@link #CLOCK_EVERY} members only, never
     * before the first one (every run makes progress).
     */
    boolean outOfTime(int start, int next, long deadline) {
        return next > start && (next - start) % CLOCK_EVERY == 0 && now() - deadline > 0;
    }

    private void scheduleDrain() {
        if (drainScheduled.compareAndSet(false, true)) {
            try {
                loop.execute(drainTask);
            } catch (RejectedExecutionException shuttingDown) {
                // the loop is gone and its sockets with it: nothing can be written any more
                drainScheduled.set(false);
                discardAll();
            }
        }
    }

    private void drain() {
        long deadline = nanoTime.getAsLong() + DRAIN_BUDGET_NANOS;
        try {
            while (true) {
                Item item = current != null ? current : queue.poll();
                if (item == null) {
                    break;
                }
                long now = nanoTime.getAsLong();
                long waited = now - item.queuedAt;
                if (item != current
                        && item instanceof BroadcastItem b
                        && waited <= limits.maxDelay().toNanos()) {
                    item = BroadcastItem.runFrom(b, queue);
                }
                current = item;
                boolean done;
                if (waited > limits.maxDelay().toNanos()) {
                    overloaded(
                            item.shed(),
                            "a message waited " + TimeUnit.NANOSECONDS.toMillis(waited) + " ms (bound "
                                    + limits.maxDelay().toMillis() + " ms)");
                    done = true;
                } else {
                    try {
                        done = item.run(this, deadline);
                    } catch (RuntimeException e) {
                        int closed = item.shed();
                        LogCode.DeliveryFailed.warn(
                                log, "{}: {} connection(s) closed: {}", loop, closed, e.toString(), e);
                        done = true;
                    }
                }
                if (!done) {
                    break; // budget spent inside the item: flush, let I/O run, continue in the next drain
                }
                current = null;
                queuedBytes.addAndGet(-item.bytes());
                metrics.queuedBytes(-item.bytes());
                if (nanoTime.getAsLong() - deadline > 0) {
                    break;
                }
            }
        } finally {
            flushAll();
            if (written > 0) {
                metrics.messagesOut(written);
                written = 0;
            }
            drainScheduled.set(false);
            if (current != null || !queue.isEmpty() || !unflushed.isEmpty()) {
                scheduleDrain();
            }
        }
    }

    private void flushAll() {
        for (int i = 0; i < unflushed.size(); i++) {
            unflushed.get(i).flush();
        }
        unflushed.clear();
    }

    private void discardAll() {
        for (Item item = queue.poll(); item != null; item = queue.poll()) {
            queuedBytes.addAndGet(-item.bytes());
            metrics.queuedBytes(-item.bytes());
            item.discard();
        }
    }

    private void overloaded(int closed, String why) {
        if (closed == 0) {
            return;
        }
        long pending = shedSinceLog.addAndGet(closed);
        long now = nanoTime.getAsLong();
        synchronized (this) {
            if (now - lastLogNanos < LOG_EVERY_NANOS) {
                return;
            }
            lastLogNanos = now;
        }
        shedSinceLog.addAndGet(-pending);
        LogCode.LoopOverloaded.warn(log, "{}: {} connection(s) closed: {}", loop, pending, why);
    }

    /**
     * Something for the loop to write. {@link #bytes()} is fixed at creation; {@link #run} writes
     * and may stop at the deadline (then it is run again by the next drain); {@link #shed} and
     * {@link #discard} release what the item holds, and so does a {@link #run} that completes.
     */
    abstract static class Item {
        long queuedAt;

        /** What the item holds in memory, for the queue's byte bound. */
        abstract long bytes();

        /** Writes (loop only); false when the deadline passed before the item was done. */
        abstract boolean run(LoopOutbox outbox, long deadline);

        /** Closes the connections that would have received the item; returns how many. Any thread. */
        abstract int shed();

        /** Releases the item unwritten (its loop is shutting down). */
        abstract void discard();
    }

    /** One shared frame for one connection (history replay, a single delivery from another thread). */
    static final class Write extends Item {
        private final Recipient recipient;
        private final OutFrame frame;

        /** @param frame retained here: the caller keeps its own reference */
        Write(Recipient recipient, OutFrame frame) {
            this.recipient = recipient;
            this.frame = frame.retain();
        }

        @Override
        long bytes() {
            return frame.size() + 16L;
        }

        @Override
        boolean run(LoopOutbox outbox, long deadline) {
            try {
                if (recipient.writeShared(frame)) {
                    outbox.countWrite();
                }
            } finally {
                frame.release();
            }
            return true;
        }

        @Override
        int shed() {
            frame.release();
            return recipient.shed() ? 1 : 0;
        }

        @Override
        void discard() {
            frame.release();
        }
    }

    /** A write to one connection that its pipeline encodes (replies and pushes from other threads). */
    static final class Task extends Item {
        /** What a reply or push is taken to hold while queued (it is encoded only when written). */
        static final long ESTIMATED_BYTES = 256;

        private final Recipient recipient;
        private final Runnable write;

        Task(Recipient recipient, Runnable write) {
            this.recipient = recipient;
            this.write = write;
        }

        @Override
        long bytes() {
            return ESTIMATED_BYTES;
        }

        @Override
        boolean run(LoopOutbox outbox, long deadline) {
            write.run();
            return true;
        }

        @Override
        int shed() {
            return recipient.shed() ? 1 : 0;
        }

        @Override
        void discard() {}
    }
}
