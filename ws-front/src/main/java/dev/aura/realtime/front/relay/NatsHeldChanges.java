package dev.aura.realtime.front.relay;

import dev.aura.realtime.common.wire.HeldStreams;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.StreamState;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * {@link HeldChanges} from JetStream: two stream-info requests per project ({@code
 * $JS.API.STREAM.INFO.*}, which ws-front's NATS user may send), on virtual threads, never on an
 * event loop. An answer is reused for {@code maxAge}, and a project's request in flight is shared,
 * so inspector pages polling every few seconds cost the nats-server at most two requests per
 * project per {@code maxAge}. Bounded: at most {@value #MAX_PROJECTS} projects are remembered.
 */
public final class NatsHeldChanges implements HeldChanges, AutoCloseable {
    static final int MAX_PROJECTS = 1_000;

    private final Connection nats;
    private final Clock clock;
    private final Duration maxAge;
    private final ExecutorService io = Executors.newVirtualThreadPerTaskExecutor();
    private final Map<String, Cached> cache = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Cached> eldest) {
            return size() > MAX_PROJECTS;
        }
    };

    private record Cached(CompletableFuture<Snapshot> answer, long atMs) {}

    public NatsHeldChanges(Connection nats, Clock clock, Duration maxAge) {
        this.nats = nats;
        this.clock = clock;
        this.maxAge = maxAge;
    }

    @Override
    public CompletableFuture<Snapshot> of(String projectId) {
        long now = clock.millis();
        synchronized (cache) {
            Cached e = cache.get(projectId);
            if (e != null && (!e.answer().isDone() || now - e.atMs() < maxAge.toMillis())) {
                return e.answer();
            }
            CompletableFuture<Snapshot> answer = CompletableFuture.supplyAsync(() -> read(projectId), io);
            cache.put(projectId, new Cached(answer, now));
            return answer;
        }
    }

    private Snapshot read(String projectId) {
        try {
            JetStreamManagement jsm = nats.jetStreamManagement();
            return new Snapshot(
                    held(jsm, HeldStreams.quarantine(projectId)), held(jsm, HeldStreams.late(projectId)), true);
        } catch (Exception e) {
            return new Snapshot(Held.NONE, Held.NONE, false);
        }
    }

    private static Held held(JetStreamManagement jsm, String stream) throws Exception {
        try {
            StreamState s = jsm.getStreamInfo(stream).getStreamState();
            return new Held(s.getMsgCount(), s.getByteCount());
        } catch (JetStreamApiException notFound) {
            return Held.NONE; // never created: nothing was held
        }
    }

    @Override
    public void close() {
        io.shutdownNow();
    }
}
