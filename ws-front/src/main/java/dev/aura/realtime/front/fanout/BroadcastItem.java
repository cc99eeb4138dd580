package dev.aura.realtime.front.fanout;

import dev.aura.realtime.front.protocol.OutFrame;
import java.util.Queue;

/**
 * One broadcast for the members of a channel on one event loop: the loop's member array (shared,
 * immutable: {@link LocalTopics.Shard}) and the message's frame per framing. The sender's thread
 * does no work per member; the loop skips, at write time, the sender ({@code exclude}), closed
 * channels, members of a private channel without broadcast read ({@link Subscriber#readsBroadcast},
 * which a token refresh can change; docs/design.md H1) and members that already got the message
 * from history by a resume ({@link Subscriber#resumed}).
 *
 * <p>Consecutive broadcasts to the same members are written as one {@link Run}, member by member:
 * each socket gets all of them in a row and is flushed once, which is where a loop that fell
 * behind catches up (a system call per socket per turn instead of per message).
 */
final class BroadcastItem extends LoopOutbox.Item {
    /** What the item is taken to hold besides its frames (the member array is shared). */
    private static final long OVERHEAD_BYTES = 64;
    /** Most broadcasts written member by member in one run. */
    static final int RUN_MAX = 64;

    private final Subscriber[] members;
    private final OutFrame[] byFraming;
    private final Recipient exclude;
    private final String messageId;
    private final long bytes;

    /**
     * @param byFraming the frame per {@code Framing.ordinal()} (null: no form in that framing);
     *     each is retained here and released when the item is done
     * @param exclude the sender's connection when it must not get its own message, else null
     * @param messageId the broadcast's message id, or null
     */
    BroadcastItem(Subscriber[] members, OutFrame[] byFraming, Recipient exclude, String messageId) {
        this.members = members;
        this.byFraming = byFraming.clone();
        this.exclude = exclude;
        this.messageId = messageId;
        long b = OVERHEAD_BYTES;
        for (OutFrame f : this.byFraming) {
            if (f != null) {
                f.retain();
                b += f.size();
            }
        }
        this.bytes = b;
    }

    @Override
    long bytes() {
        return bytes;
    }

    /** The frame member {@code s} gets, or null when it gets none (sender, closed, resumed, no form). */
    private OutFrame frameFor(Subscriber s, Recipient r) {
        if (r == exclude || !s.active() || !s.readsBroadcast() || (messageId != null && s.resumed(messageId))) {
            return null;
        }
        return byFraming[r.framing().ordinal()];
    }

    @Override
    boolean run(LoopOutbox outbox, long deadline) {
        throw new IllegalStateException("broadcasts are written as runs (LoopOutbox wraps them)");
    }

    /** Also from the submitting thread (the queue is full): no look at loop-confined resume state. */
    @Override
    int shed() {
        int closed = 0;
        for (Subscriber s : members) {
            Recipient r = s.recipient();
            if (r != exclude
                    && s.active()
                    && s.readsBroadcast()
                    && byFraming[r.framing().ordinal()] != null
                    && r.shed()) {
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
        for (OutFrame f : byFraming) {
            if (f != null) {
                f.release();
            }
        }
    }

    /**
     * {@code first} and the broadcasts queued right behind it to the same members (at most
     * {@link #RUN_MAX}), taken off the queue as one run. Loop only (the queue's consumer).
     */
    static Run runFrom(BroadcastItem first, Queue<LoopOutbox.Item> queue) {
        BroadcastItem[] items = new BroadcastItem[RUN_MAX];
        items[0] = first;
        int n = 1;
        while (n < RUN_MAX && queue.peek() instanceof BroadcastItem b && b.members == first.members) {
            items[n++] = b;
            queue.poll();
        }
        Run run = new Run(items, n);
        run.queuedAt = first.queuedAt;
        return run;
    }

    /** Broadcasts to the same members, written member by member. */
    static final class Run extends LoopOutbox.Item {
        private final BroadcastItem[] items;
        private final int count;
        private final Subscriber[] members;
        private final long bytes;
        /** Loop only: the next member to write to. */
        private int next;

        Run(BroadcastItem[] items, int count) {
            this.items = items;
            this.count = count;
            this.members = items[0].members;
            long b = 0;
            for (int i = 0; i < count; i++) {
                b += items[i].bytes;
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
            for (; next < members.length; next++) {
                if (outbox.outOfTime(start, next, deadline)) {
                    return false;
                }
                Subscriber s = members[next];
                Recipient r = s.recipient();
                for (int i = 0; i < count; i++) {
                    OutFrame frame = items[i].frameFor(s, r);
                    if (frame != null && r.writeShared(frame)) {
                        outbox.countWrite();
                    }
                }
            }
            discard();
            return true;
        }

        @Override
        int shed() {
            int closed = 0;
            for (; next < members.length; next++) {
                Subscriber s = members[next];
                Recipient r = s.recipient();
                for (int i = 0; i < count; i++) {
                    if (items[i].frameFor(s, r) != null) {
                        if (r.shed()) {
                            closed++;
                        }
                        break;
                    }
                }
            }
            discard();
            return closed;
        }

        @Override
        void discard() {
            for (int i = 0; i < count; i++) {
                items[i].release();
            }
        }
    }
}
