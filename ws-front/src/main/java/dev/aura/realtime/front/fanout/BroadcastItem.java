package dev.aura.realtime.front.fanout;

import dev.aura.realtime.front.protocol.OutFrame;

/**
 * One broadcast for the members of a channel on one event loop: the loop's member array (shared,
 * immutable: {@link LocalTopics.Shard}) and the message's frame per framing. The sender's thread
 * does no work per member; the loop skips, at write time, the sender ({@code exclude}), closed
 * channels and members that already got the message from history by a resume
 * ({@link Subscriber#resumed}).
 */
final class BroadcastItem extends LoopOutbox.Item {
    /** What the item is taken to hold besides its frames (the member array is shared). */
    private static final long OVERHEAD_BYTES = 64;

    private final Subscriber[] members;
    private final OutFrame[] byFraming;
    private final Recipient exclude;
    private final String messageId;
    private final long bytes;
    /** Loop only: the next member to write to. */
    private int next;

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

    @Override
    boolean run(LoopOutbox outbox, long deadline) {
        int start = next;
        for (; next < members.length; next++) {
            if (next > start && (next - start) % LoopOutbox.CLOCK_EVERY == 0 && outbox.now() - deadline > 0) {
                return false;
            }
            Subscriber s = members[next];
            Recipient r = s.recipient();
            if (r == exclude || !s.active() || (messageId != null && s.resumed(messageId))) {
                continue;
            }
            OutFrame frame = byFraming[r.framing().ordinal()];
            if (frame != null && r.writeShared(frame)) {
                outbox.countWrite();
            }
        }
        release();
        return true;
    }

    @Override
    int shed() {
        int closed = 0;
        for (; next < members.length; next++) {
            Subscriber s = members[next];
            Recipient r = s.recipient();
            if (r != exclude && s.active() && byFraming[r.framing().ordinal()] != null && r.shed()) {
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
}
