package dev.aura.realtime.front.resume;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.AuraHeaders;
import dev.aura.realtime.common.wire.ChangeEvent;
import dev.aura.realtime.common.wire.ChangeHistory;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.StreamInfo;
import io.nats.client.api.StreamState;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * Streams one project's history ({@link ChangeHistory#streamName}) to a resumed channel
 * (docs/design.md R): finds the first stored change after the last one the client got (binary
 * search by event id: the stream holds the project's changes in id order), then reads forward to
 * the stream's last message at the time of the call, chunk by chunk, keeping the changes whose
 * {@code allowed_sub_ids} contain one of the resumed subscription's ids. Only the joining client's
 * own project's stream is read (the project of its verified token), and nothing of another
 * subscriber's is kept. Reads stop after the project's history bytes.
 *
 * <p><b>Bounded (issue 38).</b> A chunk is at most {@link #CHUNK_BYTES} of stored messages (or one
 * larger message); the next is read only once the {@link Sink} wrote the previous to the socket.
 * Every chunk, from the start of its read until it was written, holds a reservation of
 * {@link #CHUNK_BYTES} plus the largest NATS message in a replica-wide byte budget, so the bytes
 * all replays hold at once are bounded however many channels resume. Permits are per project: a
 * project has at most {@link #CHUNKS_PER_PROJECT} chunks in flight, and the replica reads at most
 * {@link #MAX_READS_IN_FLIGHT} at once (each a JetStream request per message on the nats-server all
 * projects share), both handed out first come first served, chunk by chunk: another project's
 * replay waits for at most a few chunks, never for a whole replay.
 */
public final class HistoryReader implements AutoCloseable {
    /** Receives a replay chunk by chunk. */
    public interface Sink {
        /**
         * The next changes of the replay, oldest first; completes once they reached the socket, fails
         * when it closed (the replay stops).
         */
        CompletableFuture<?> deliver(List<ChangeEvent> changes);
    }

    /** Stored bytes read into one chunk (at least one message). */
    static final long CHUNK_BYTES = 256 * 1024;
    /** Chunks of one project in flight at once (read, or written and not yet on the sockets). */
    static final int CHUNKS_PER_PROJECT = 2;
    /**
     * Chunk reads one replica runs at once: a replica kill makes every client it had resume at about
     * the same moment, and each read is one JetStream request per stored message on the nats-server
     * all projects share.
     */
    static final int MAX_READS_IN_FLIGHT = 4;

    private final Connection nats;
    private final ObjectMapper mapper;
    private final ExecutorService io = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore reads = new Semaphore(MAX_READS_IN_FLIGHT, true);
    /** The replica-wide byte budget, in KiB. */
    private final Semaphore budget;

    private final int reserveKib;
    private final Map<String, ProjectPermits> projects = new HashMap<>();

    /** A project's chunks in flight, and how many replays use its entry. */
    private static final class ProjectPermits {
        final Semaphore chunks = new Semaphore(CHUNKS_PER_PROJECT, true);
        int users;
    }

    /**
     * @param budgetBytes the bytes all replays of this replica may hold at once (chunks read and not
     *     yet written)
     */
    public HistoryReader(Connection nats, ObjectMapper mapper, long budgetBytes) {
        this.nats = nats;
        this.mapper = mapper;
        long maxPayload =
                nats.getServerInfo() == null ? 1 << 20 : nats.getServerInfo().getMaxPayload();
        int budgetKib = (int) Math.min(Integer.MAX_VALUE, Math.max(1, budgetBytes / 1024));
        this.budget = new Semaphore(budgetKib, true);
        this.reserveKib = (int) Math.min(budgetKib, (CHUNK_BYTES + maxPayload) / 1024 + 1);
    }

    /**
     * Streams the changes after {@code afterId} (from the start of the history when null) whose
     * verdicts name one of {@code subIds} to {@code sink}, at most {@code maxBytes} of stored
     * messages. Completes with null once all were delivered (or the sink closed), else with why the
     * resume is not possible; never fails.
     */
    public CompletableFuture<ResumeReason> replay(
            String projectId, String afterId, Set<String> subIds, long maxBytes, Sink sink) {
        return CompletableFuture.supplyAsync(
                () -> {
                    ProjectPermits permits = enter(projectId);
                    try {
                        return replayNow(projectId, afterId, subIds, maxBytes, sink, permits);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return ResumeReason.history_unavailable;
                    } catch (Exception e) {
                        return ResumeReason.history_unavailable;
                    } finally {
                        leave(projectId);
                    }
                },
                io);
    }

    private ResumeReason replayNow(
            String projectId, String afterId, Set<String> subIds, long maxBytes, Sink sink, ProjectPermits permits)
            throws Exception {
        JetStreamManagement jsm = nats.jetStreamManagement();
        String stream = ChangeHistory.streamName(projectId);
        long seq;
        long last;
        try (Held held = hold(permits)) {
            StreamInfo info;
            try {
                info = jsm.getStreamInfo(stream);
            } catch (JetStreamApiException notFound) {
                return ResumeReason.history_evicted;
            }
            StreamState state = info.getStreamState();
            long first = state.getFirstSequence();
            last = state.getLastSequence();
            if (state.getMsgCount() == 0 || last < first) {
                return null;
            }
            if (afterId != null) {
                String firstId = idAt(jsm, stream, first);
                if (first > 1 && firstId != null && EventIds.after(firstId, afterId)) {
                    return ResumeReason.history_evicted; // what came right after may have been dropped
                }
                seq = firstAfter(jsm, stream, first, last, afterId);
            } else {
                seq = first;
            }
        }
        long read = 0;
        while (seq <= last && read <= maxBytes) {
            List<ChangeEvent> chunk = new ArrayList<>();
            try (Held held = hold(permits)) {
                long chunkBytes = 0;
                while (seq <= last && read <= maxBytes && chunkBytes < CHUNK_BYTES) {
                    MessageInfo m = get(jsm, stream, seq++);
                    if (m == null || m.getData() == null || eventId(m) == null) {
                        continue;
                    }
                    chunkBytes += m.getData().length;
                    read += m.getData().length;
                    ChangeEvent e = mapper.readValue(m.getData(), ChangeEvent.class);
                    if (!projectId.equals(e.projectId()) || !EventIds.after(e.eventId(), afterId)) {
                        continue;
                    }
                    for (String id : e.allowedSubIds()) {
                        if (subIds.contains(id)) {
                            chunk.add(e);
                            break;
                        }
                    }
                }
                held.readDone();
                if (!chunk.isEmpty()) {
                    try {
                        sink.deliver(chunk).get();
                    } catch (java.util.concurrent.ExecutionException closed) {
                        return null; // the channel closed: nobody to replay to
                    }
                }
            }
        }
        return null;
    }

    /**
     * A chunk's permits: one of its project's, its reservation of the byte budget, one read. The
     * read is given back once the chunk is read, the rest once it is closed (written).
     */
    private final class Held implements AutoCloseable {
        private final ProjectPermits permits;
        private boolean reading = true;

        Held(ProjectPermits permits) {
            this.permits = permits;
        }

        void readDone() {
            if (reading) {
                reading = false;
                reads.release();
            }
        }

        @Override
        public void close() {
            readDone();
            budget.release(reserveKib);
            permits.chunks.release();
        }
    }

    private Held hold(ProjectPermits permits) throws InterruptedException {
        permits.chunks.acquire();
        try {
            budget.acquire(reserveKib);
        } catch (InterruptedException e) {
            permits.chunks.release();
            throw e;
        }
        try {
            reads.acquire();
        } catch (InterruptedException e) {
            budget.release(reserveKib);
            permits.chunks.release();
            throw e;
        }
        return new Held(permits);
    }

    private ProjectPermits enter(String projectId) {
        synchronized (projects) {
            ProjectPermits p = projects.computeIfAbsent(projectId, k -> new ProjectPermits());
            p.users++;
            return p;
        }
    }

    private void leave(String projectId) {
        synchronized (projects) {
            ProjectPermits p = projects.get(projectId);
            if (p != null && --p.users == 0) {
                projects.remove(projectId);
            }
        }
    }

    /** The first sequence in [lo, hi] whose event id is after {@code afterId}; hi + 1 when none. */
    private static long firstAfter(JetStreamManagement jsm, String stream, long lo, long hi, String afterId)
            throws Exception {
        long a = lo;
        long b = hi + 1;
        while (a < b) {
            long mid = a + (b - a) / 2;
            String id = idAt(jsm, stream, mid);
            if (id != null && EventIds.after(id, afterId)) {
                b = mid;
            } else {
                a = mid + 1;
            }
        }
        return a;
    }

    private static String idAt(JetStreamManagement jsm, String stream, long seq) throws Exception {
        MessageInfo m = get(jsm, stream, seq);
        return m == null ? null : eventId(m);
    }

    private static String eventId(MessageInfo m) {
        return m.getHeaders() == null ? null : m.getHeaders().getFirst(AuraHeaders.EVENT_ID);
    }

    /** The message at {@code seq}, or null when it was removed. */
    private static MessageInfo get(JetStreamManagement jsm, String stream, long seq) throws Exception {
        try {
            return jsm.getMessage(stream, seq);
        } catch (JetStreamApiException gone) {
            return null;
        }
    }

    @Override
    public void close() {
        io.shutdown();
    }
}
