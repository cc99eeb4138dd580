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
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

/**
 * Reads one project's history stream ({@link ChangeHistory#streamName}) for a replay
 * (docs/design.md R): finds the first stored change after the last one the client got (binary
 * search by event id: the stream holds the project's changes in id order), then reads forward to
 * the stream's last message at the time of the call, keeping the changes whose
 * {@code allowed_sub_ids} contain one of the resumed subscription's ids. Only the joining client's
 * own project's stream is read (the project of its verified token), and nothing of another
 * subscriber's is kept: a change is replayed only when the cdc-worker's verdict listed one of
 * this channel's sub ids. Reads stop after the project's history bytes.
 */
public final class HistoryReader implements AutoCloseable {
    /** A replay's changes, oldest first, or why there is none. */
    public record Result(List<ChangeEvent> events, ResumeReason notPossible) {
        static Result of(ResumeReason reason) {
            return new Result(List.of(), reason);
        }
    }

    /**
     * Most history reads one replica runs at once. A replica kill makes every client it had resume
     * at about the same moment, and each read is one JetStream request per stored message on the
     * nats-server all projects share; the others wait here (their live changes held, bounded per
     * channel, {@code buffer_overflow} past it) instead of all loading JetStream at once.
     */
    static final int MAX_READS_IN_FLIGHT = 4;

    private final Connection nats;
    private final ObjectMapper mapper;
    private final ExecutorService io = Executors.newVirtualThreadPerTaskExecutor();
    private final Semaphore reads = new Semaphore(MAX_READS_IN_FLIGHT, true);

    public HistoryReader(Connection nats, ObjectMapper mapper) {
        this.nats = nats;
        this.mapper = mapper;
    }

    /**
     * @param afterId replay changes after this id; null: from {@code fromMs} on (a subscription that got nothing yet)
     * @param fromMs with a null {@code afterId}: the earliest store time to read from
     * @param subIds the resumed subscription's sub ids
     * @param maxBytes most message bytes read
     */
    public CompletableFuture<Result> read(
            String projectId, String afterId, long fromMs, Set<String> subIds, long maxBytes) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        reads.acquire();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return Result.of(ResumeReason.history_unavailable);
                    }
                    try {
                        return readNow(projectId, afterId, fromMs, subIds, maxBytes);
                    } catch (Exception e) {
                        return Result.of(ResumeReason.history_unavailable);
                    } finally {
                        reads.release();
                    }
                },
                io);
    }

    private Result readNow(String projectId, String afterId, long fromMs, Set<String> subIds, long maxBytes)
            throws Exception {
        JetStreamManagement jsm = nats.jetStreamManagement();
        String stream = ChangeHistory.streamName(projectId);
        StreamInfo info;
        try {
            info = jsm.getStreamInfo(stream);
        } catch (JetStreamApiException notFound) {
            return Result.of(ResumeReason.history_evicted);
        }
        StreamState state = info.getStreamState();
        long first = state.getFirstSequence();
        long last = state.getLastSequence();
        if (state.getMsgCount() == 0 || last < first) {
            return new Result(List.of(), null);
        }
        long start;
        if (afterId != null) {
            String firstId = idAt(jsm, stream, first);
            if (first > 1 && firstId != null && EventIds.after(firstId, afterId)) {
                return Result.of(ResumeReason.history_evicted); // what came right after may have been dropped
            }
            start = firstAfter(jsm, stream, first, last, afterId);
        } else {
            start = firstAtOrAfterTime(jsm, stream, first, last, fromMs);
        }
        List<ChangeEvent> out = new ArrayList<>();
        long read = 0;
        for (long seq = start; seq <= last && read <= maxBytes; seq++) {
            MessageInfo m = get(jsm, stream, seq);
            if (m == null || m.getData() == null || eventId(m) == null) {
                continue;
            }
            read += m.getData().length;
            ChangeEvent e = mapper.readValue(m.getData(), ChangeEvent.class);
            if (!projectId.equals(e.projectId()) || !EventIds.after(e.eventId(), afterId)) {
                continue;
            }
            for (String id : e.allowedSubIds()) {
                if (subIds.contains(id)) {
                    out.add(e);
                    break;
                }
            }
        }
        return new Result(out, null);
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

    private static long firstAtOrAfterTime(JetStreamManagement jsm, String stream, long lo, long hi, long fromMs)
            throws Exception {
        long a = lo;
        long b = hi + 1;
        while (a < b) {
            long mid = a + (b - a) / 2;
            MessageInfo m = get(jsm, stream, mid);
            if (m != null && m.getTime() != null && m.getTime().toInstant().toEpochMilli() >= fromMs) {
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
