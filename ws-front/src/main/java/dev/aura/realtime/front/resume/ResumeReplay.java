package dev.aura.realtime.front.resume;

import dev.aura.realtime.common.wire.ChangeEvent;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The replay of one resumed channel (docs/design.md R): the history after the record's last
 * delivered change, streamed by the {@link HistoryReader} chunk by chunk, each chunk written to
 * the socket before the next is read (issue 38: a replay holds one chunk, not the history); then
 * the live changes its {@link ReplayGate} held meanwhile, then live delivery. Chunks are delivered
 * on the channel's event loop.
 */
final class ResumeReplay implements HistoryReader.Sink {
    private final Resumes owner;
    private final ResumableChannel channel;
    private final ResumeTracker tracker;
    /** The last change read for the replay (event loop only). */
    private String last;

    private int replayed;

    ResumeReplay(Resumes owner, ResumableChannel channel, ResumeTracker tracker) {
        this.owner = owner;
        this.channel = channel;
        this.tracker = tracker;
    }

    /** Streams the changes after {@code afterId} of {@code subIds} from the project's history. */
    void start(String projectId, String afterId, Set<String> subIds) {
        ResumeServices services = owner.services;
        services.history()
                .replay(projectId, afterId, subIds, services.historyBytes(projectId), this)
                .exceptionally(e -> ResumeReason.history_unavailable)
                .thenAccept(reason -> channel.recipient().eventLoop().execute(() -> finish(reason)));
    }

    @Override
    public CompletableFuture<?> deliver(List<ChangeEvent> changes) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        channel.recipient().eventLoop().execute(() -> {
            if (!channel.active() || tracker.gate() == null) {
                done.completeExceptionally(new IllegalStateException("channel closed"));
                return;
            }
            String delivered = null;
            for (ChangeEvent e : changes) {
                if (owner.fanout.deliverChange(channel, e)) {
                    delivered = e.eventId();
                }
                last = e.eventId();
            }
            replayed += changes.size();
            if (delivered == null) {
                done.complete(null);
                return;
            }
            // the chunk's frames were written to the channel, then handed to the kernel
            tracker.writtenThrough(delivered).whenComplete((v, e) -> {
                if (e != null) {
                    done.completeExceptionally(e);
                } else {
                    channel.writeBarrier().addListener(f -> {
                        if (f.isSuccess()) {
                            done.complete(null);
                        } else {
                            done.completeExceptionally(f.cause());
                        }
                    });
                }
            });
        });
        return done;
    }

    /** The history was replayed (or could not be): the held live changes follow, then live delivery. */
    private void finish(ResumeReason notPossible) {
        ReplayGate gate = tracker.gate();
        if (!channel.active() || gate == null) {
            return;
        }
        if (notPossible != null) {
            owner.notPossible(channel, notPossible);
        } else {
            owner.metrics.resumed(replayed);
        }
        // the held changes are queued while the gate still holds: a live change cannot overtake them
        if (gate.goLive(last, e -> owner.fanout.deliverChange(channel, e))) {
            owner.notPossible(channel, ResumeReason.buffer_overflow);
        }
    }
}
