package dev.aura.realtime.front.relay;

import java.util.concurrent.CompletableFuture;

/**
 * What a project's streams of held changes hold now (docs/design.md C13, C14): its quarantine and
 * its late lane, for the inspector (D9). Read-only: ws-front never writes these streams.
 */
public interface HeldChanges {
    /**
     * One stream's size.
     *
     * @param changes messages in the stream (a change larger than a message is several)
     * @param bytes the stream's bytes
     */
    record Held(long changes, long bytes) {
        public static final Held NONE = new Held(0, 0);
    }

    /**
     * @param quarantine the project's quarantine ({@code AURA_QUARANTINE_<project>})
     * @param late the project's late lane ({@code AURA_LATE_<project>})
     * @param known false when NATS did not answer (then both are {@link Held#NONE})
     */
    record Snapshot(Held quarantine, Held late, boolean known) {}

    /** The project's streams now (a stream never created holds nothing); never fails. */
    CompletableFuture<Snapshot> of(String projectId);
}
