package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.cdc.catalog.ProjectLimitsTable;
import dev.aura.realtime.cdc.failure.LogCode;
import dev.aura.realtime.common.wire.ChangeHistory;
import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import java.io.IOException;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The per-project history streams of postgres_changes resume (docs/design.md R): every
 * {@code refresh} it reads which projects have {@code postgres_changes_resume_seconds > 0}, creates
 * or updates their stream ({@link ChangeHistory#streamName}, subjects {@link ChangeHistory#subjects},
 * max bytes the project's bound, max age the window plus a minute, discard old) and deletes the
 * streams of projects that switched resume off. {@link #covers} tells the {@link EventPublisher}
 * which change subjects to publish through JetStream (awaiting the stream's ack before the slot
 * advances). Every replica runs it (idempotent), so a new leader knows the set at once.
 *
 * <p>Threads: one scheduler thread writes; {@link #covers} reads a volatile snapshot from any thread.
 */
public final class HistoryStreams implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HistoryStreams.class);

    /** Settings of the streams: file or memory storage, replicas. */
    public record Settings(boolean fileStorage, int replicas, Duration refresh) {}

    private final Connection nats;
    private final ProjectLimitsTable limits;
    private final Settings settings;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "aura-history-streams");
        t.setDaemon(true);
        return t;
    });
    /** Project tokens (subject encoding) of the projects whose stream exists. */
    private volatile Set<String> tokens = Set.of();

    public HistoryStreams(Connection nats, ProjectLimitsTable limits, Settings settings) {
        this.nats = nats;
        this.limits = limits;
        this.settings = settings;
    }

    /** Syncs once now (blocking, so the first batch already knows), then every {@code refresh}. */
    public void start() {
        syncNow();
        long ms = settings.refresh().toMillis();
        timer.scheduleWithFixedDelay(this::syncNow, ms, ms, TimeUnit.MILLISECONDS);
    }

    /** Whether a publish on {@code subject} must be stored in a history stream (and its ack awaited). */
    public boolean covers(String subject) {
        Set<String> t = tokens;
        if (t.isEmpty() || !subject.startsWith(CHANGES_PREFIX)) {
            return false;
        }
        int end = subject.indexOf('.', CHANGES_PREFIX.length());
        return end > 0 && t.contains(subject.substring(CHANGES_PREFIX.length(), end));
    }

    private static final String CHANGES_PREFIX = Subjects.CHANGES + ".";

    /** One pass; failures are logged and the previous set kept. Package-visible for tests. */
    public void syncNow() {
        List<ProjectLimitsTable.Resume> wanted;
        try {
            wanted = limits.resumeProjects();
        } catch (Exception e) {
            log.warn("[{}] reading the projects with resume on: {}", LogCode.HISTORY_STREAM_FAILED, e.toString());
            return;
        }
        JetStreamManagement jsm;
        try {
            jsm = nats.jetStreamManagement();
        } catch (IOException | RuntimeException e) {
            log.warn("[{}] JetStream unavailable: {}", LogCode.HISTORY_STREAM_FAILED, e.toString());
            return;
        }
        Map<String, String> wantedStreams = new HashMap<>();
        java.util.HashSet<String> ready = new java.util.HashSet<>();
        for (ProjectLimitsTable.Resume r : wanted) {
            String name = ChangeHistory.streamName(r.projectId());
            wantedStreams.put(name, r.projectId());
            try {
                ensure(jsm, name, r);
                ready.add(Subjects.encodeToken(r.projectId()));
            } catch (IOException | JetStreamApiException | RuntimeException e) {
                log.warn("[{}] {} of project {}: {}", LogCode.HISTORY_STREAM_FAILED, name, r.projectId(), e.toString());
            }
        }
        tokens = Set.copyOf(ready); // narrowed before any delete: no publish awaits a stream being deleted
        try {
            for (String name : jsm.getStreamNames()) {
                if (name.startsWith(ChangeHistory.STREAM_PREFIX) && !wantedStreams.containsKey(name)) {
                    jsm.deleteStream(name);
                    log.info("deleted history stream {} (resume switched off)", name);
                }
            }
        } catch (IOException | JetStreamApiException | RuntimeException e) {
            log.warn("[{}] deleting history streams: {}", LogCode.HISTORY_STREAM_FAILED, e.toString());
        }
    }

    private void ensure(JetStreamManagement jsm, String name, ProjectLimitsTable.Resume r)
            throws IOException, JetStreamApiException {
        StreamConfiguration wanted = StreamConfiguration.builder()
                .name(name)
                .subjects(ChangeHistory.subjects(r.projectId()))
                .storageType(settings.fileStorage() ? StorageType.File : StorageType.Memory)
                .replicas(settings.replicas())
                .retentionPolicy(RetentionPolicy.Limits)
                .discardPolicy(DiscardPolicy.Old)
                .maxBytes(r.historyBytes())
                .maxAge(ChangeHistory.maxAge(r.windowSeconds()))
                .duplicateWindow(min(ChangeHistory.DUPLICATE_WINDOW, ChangeHistory.maxAge(r.windowSeconds())))
                .allowDirect(false) // ws-front reads by STREAM.MSG.GET (its NATS permissions)
                .build();
        StreamInfo info;
        try {
            info = jsm.getStreamInfo(name);
        } catch (JetStreamApiException notFound) {
            jsm.addStream(wanted);
            log.info(
                    "created history stream {} ({} bytes, max age {} s)",
                    name,
                    r.historyBytes(),
                    wanted.getMaxAge().toSeconds());
            return;
        }
        StreamConfiguration c = info.getConfiguration();
        if (c.getMaxBytes() != wanted.getMaxBytes()
                || !c.getMaxAge().equals(wanted.getMaxAge())
                || c.getAllowDirect()) {
            jsm.updateStream(wanted);
            log.info(
                    "updated history stream {} ({} bytes, max age {} s)",
                    name,
                    r.historyBytes(),
                    wanted.getMaxAge().toSeconds());
        }
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
