package dev.aura.realtime.cdc.publish;

import dev.aura.realtime.cdc.event.HeldChange;
import dev.aura.realtime.cdc.event.Quarantined;
import dev.aura.realtime.cdc.failure.CdcFailure;
import dev.aura.realtime.cdc.failure.CdcReason;
import dev.aura.realtime.common.wire.HeldStreams;
import dev.aura.realtime.common.wire.Subjects;
import io.nats.client.Connection;
import io.nats.client.JetStreamApiException;
import io.nats.client.JetStreamManagement;
import io.nats.client.PurgeOptions;
import io.nats.client.api.DiscardPolicy;
import io.nats.client.api.MessageInfo;
import io.nats.client.api.PublishAck;
import io.nats.client.api.RetentionPolicy;
import io.nats.client.api.StorageType;
import io.nats.client.api.StreamConfiguration;
import io.nats.client.api.StreamInfo;
import io.nats.client.api.StreamState;
import io.nats.client.impl.Headers;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Each project's two JetStream streams of held changes (docs/design.md C13, C14): its
 * <b>late lane</b> ({@code AURA_LATE_<project>}, changes waiting for a slow project's checks;
 * bounded in bytes, discard new, the lane removes what it delivered) and its <b>quarantine</b>
 * ({@code AURA_QUARANTINE_<project>}, changes that could not be delivered; bounded in bytes and
 * age, discard old, kept for an operator to list and re-publish). Created when first needed.
 *
 * <p>A message is the change's wal2json row with {@code Aura-Event-Id} (also its JetStream message
 * id: a batch read again stores nothing twice), {@code Aura-Commit-Timestamp}, {@code Aura-Table};
 * a quarantined one also {@code Aura-Fault}, {@code Aura-Stage}, {@code Aura-Detail}. A row larger
 * than a message is stored in parts ({@code Aura-Part: i/n}, consecutive). Stores go through the
 * {@link EventPublisher}, whose flush awaits their acks: the slot advances only after the stream
 * stored them. Thread-safe.
 */
public final class ProjectStreams {
    /** The two kinds of stream. */
    public enum Kind {
        LATE(HeldStreams.LATE_PREFIX, Subjects.PREFIX + "late."),
        QUARANTINE(HeldStreams.QUARANTINE_PREFIX, Subjects.PREFIX + "quarantine.");

        final String streamPrefix;
        final String subjectPrefix;

        Kind(String streamPrefix, String subjectPrefix) {
            this.streamPrefix = streamPrefix;
            this.subjectPrefix = subjectPrefix;
        }
    }

    /**
     * @param fileStorage file (true) or memory storage
     * @param replicas JetStream replicas of each stream
     * @param lateBytes bound of one project's late lane; JetStream's own bound is set a message above it
     * @param quarantineBytes bound of one project's quarantine (oldest entries go first)
     * @param quarantineMaxAge how long a quarantined change is kept
     */
    public record Settings(
            boolean fileStorage, int replicas, long lateBytes, long quarantineBytes, Duration quarantineMaxAge) {}

    /** A stored change and where it is. */
    public record Stored(
            long seq, long lastSeq, HeldChange change, Quarantined why, ZonedDateTime storedAt, long bytes) {}

    /** What a stream holds: its first and last sequence, messages and bytes. */
    public record State(long firstSeq, long lastSeq, long messages, long bytes) {}

    /** Room kept in a message for the headers. */
    private static final int HEADER_ROOM = 2048;
    /** JetStream's duplicate window: a batch read again within it stores nothing twice. */
    private static final Duration DUPLICATE_WINDOW = Duration.ofMinutes(2);
    /** A late lane's stream outlives a leaderless gap of this long. */
    private static final Duration LATE_MAX_AGE = Duration.ofDays(1);

    private final Connection nats;
    private final EventPublisher publisher;
    private final Settings settings;
    private final Set<String> known = ConcurrentHashMap.newKeySet();

    public ProjectStreams(Connection nats, EventPublisher publisher, Settings settings) {
        this.nats = nats;
        this.publisher = publisher;
        this.settings = settings;
    }

    public Settings settings() {
        return settings;
    }

    /** The stream's name ({@link HeldStreams}: ws-front's inspector reads the streams by it). */
    public static String streamName(Kind kind, String projectId) {
        return kind == Kind.LATE ? HeldStreams.late(projectId) : HeldStreams.quarantine(projectId);
    }

    static String subject(Kind kind, String projectId) {
        return kind.subjectPrefix + Subjects.encodeToken(projectId);
    }

    /**
     * Stores a change in the project's stream of {@code kind} ({@code why} for the quarantine).
     *
     * @return the ack of its last part (the stream's sequence of the change)
     */
    public CompletableFuture<PublishAck> store(Kind kind, HeldChange change, Quarantined why) throws CdcFailure {
        return store(kind, change, why, "");
    }

    /**
     * As {@link #store(Kind, HeldChange, Quarantined)}, the JetStream message id extended by
     * {@code idSuffix}: a re-publish from the quarantine stores the change again although its event
     * id was stored in the same lane within the duplicate window.
     */
    public CompletableFuture<PublishAck> store(Kind kind, HeldChange change, Quarantined why, String idSuffix)
            throws CdcFailure {
        ensure(kind, change.projectId());
        byte[] row = change.raw().bytes();
        int partBytes = (int) Math.max(1024, Math.min(Integer.MAX_VALUE, publisher.maxPayload() - HEADER_ROOM));
        int parts = Math.max(1, (row.length + partBytes - 1) / partBytes);
        CompletableFuture<PublishAck> last = null;
        for (int i = 0; i < parts; i++) {
            Headers h = HeldMessages.headers(change, why);
            String id = change.eventId() + idSuffix;
            byte[] body = row;
            if (parts > 1) {
                h.add(HeldMessages.PART, (i + 1) + "/" + parts);
                id = id + "#" + (i + 1);
                int from = i * partBytes;
                body = java.util.Arrays.copyOfRange(row, from, Math.min(row.length, from + partBytes));
            }
            last = publisher.store(subject(kind, change.projectId()), h, body, id);
            String name = streamName(kind, change.projectId());
            last.whenComplete((ack, err) -> {
                if (err != null) {
                    known.remove(name); // e.g. deleted meanwhile: the next store creates it again
                }
            });
        }
        return last;
    }

    /**
     * Reads up to {@code max} changes from sequence {@code fromSeq} on (parts put together).
     *
     * @return the changes in order; empty when the stream has none from there (or does not exist)
     */
    public List<Stored> read(Kind kind, String projectId, long fromSeq, int max) throws CdcFailure {
        State s = state(kind, projectId);
        List<Stored> out = new ArrayList<>();
        if (s == null || s.messages() == 0) {
            return out;
        }
        String name = streamName(kind, projectId);
        JetStreamManagement jsm = jsm();
        long seq = Math.max(fromSeq, s.firstSeq());
        ByteArrayOutputStream parts = null;
        long partsFrom = 0;
        while (seq <= s.lastSeq() && out.size() < max) {
            MessageInfo m = get(jsm, name, seq);
            seq++;
            if (m == null) {
                parts = null; // a removed part: the change is incomplete
                continue;
            }
            String part = HeldMessages.header(m.getHeaders(), HeldMessages.PART);
            byte[] data = m.getData() == null ? new byte[0] : m.getData();
            if (part == null) {
                out.add(HeldMessages.stored(m.getSeq(), m.getSeq(), m, data, projectId));
                parts = null;
                continue;
            }
            int slash = part.indexOf('/');
            int i = Integer.parseInt(part.substring(0, slash));
            int n = Integer.parseInt(part.substring(slash + 1));
            if (i == 1) {
                parts = new ByteArrayOutputStream();
                partsFrom = m.getSeq();
            }
            if (parts == null) {
                continue;
            }
            parts.writeBytes(data);
            if (i == n) {
                out.add(HeldMessages.stored(partsFrom, m.getSeq(), m, parts.toByteArray(), projectId));
                parts = null;
            }
        }
        return out;
    }

    /** One change by the sequence of its (first) message, or null. */
    public Stored one(Kind kind, String projectId, long seq) throws CdcFailure {
        List<Stored> got = read(kind, projectId, seq, 1);
        return got.isEmpty() || got.get(0).seq() != seq ? null : got.get(0);
    }

    /** The stream's state, or null when it does not exist. */
    public State state(Kind kind, String projectId) throws CdcFailure {
        try {
            StreamState s = jsm().getStreamInfo(streamName(kind, projectId)).getStreamState();
            return new State(s.getFirstSequence(), s.getLastSequence(), s.getMsgCount(), s.getByteCount());
        } catch (JetStreamApiException e) {
            if (e.getApiErrorCode() == 10059) { // stream not found
                return null;
            }
            throw unavailable("stream info", e);
        } catch (IOException e) {
            throw unavailable("stream info", e);
        }
    }

    /** Removes the messages below {@code seq} (what the late lane delivered). */
    public void purgeBelow(Kind kind, String projectId, long seq) throws CdcFailure {
        try {
            jsm().purgeStream(
                            streamName(kind, projectId),
                            PurgeOptions.builder().sequence(seq).build());
        } catch (IOException | JetStreamApiException e) {
            throw unavailable("purge", e);
        }
    }

    /** Removes messages {@code from..to} (an operator removing re-published quarantine entries). */
    public void delete(Kind kind, String projectId, long from, long to) throws CdcFailure {
        JetStreamManagement jsm = jsm();
        for (long seq = from; seq <= to; seq++) {
            try {
                jsm.deleteMessage(streamName(kind, projectId), seq);
            } catch (JetStreamApiException e) {
                // already gone (aged out, evicted, deleted): nothing to do
            } catch (IOException e) {
                throw unavailable("delete", e);
            }
        }
    }

    /** Deletes the project's stream of {@code kind} (an idle late lane). */
    public void deleteStream(Kind kind, String projectId) throws CdcFailure {
        String name = streamName(kind, projectId);
        known.remove(name);
        try {
            jsm().deleteStream(name);
        } catch (JetStreamApiException e) {
            // already gone
        } catch (IOException e) {
            throw unavailable("delete stream", e);
        }
    }

    /** The names of the existing streams of {@code kind}. */
    public List<String> streams(Kind kind) throws CdcFailure {
        try {
            List<String> out = new ArrayList<>();
            for (String name : jsm().getStreamNames()) {
                if (name.startsWith(kind.streamPrefix)) {
                    out.add(name);
                }
            }
            return out;
        } catch (IOException | JetStreamApiException e) {
            throw unavailable("stream names", e);
        }
    }

    /** The project id of a stream of {@code kind} (read from its subject), or null. */
    public String projectOf(Kind kind, String streamName) throws CdcFailure {
        try {
            StreamInfo info = jsm().getStreamInfo(streamName);
            for (String s : info.getConfiguration().getSubjects()) {
                if (s.startsWith(kind.subjectPrefix)) {
                    return Subjects.decodeToken(s.substring(kind.subjectPrefix.length()));
                }
            }
            return null;
        } catch (JetStreamApiException e) {
            return null;
        } catch (IOException e) {
            throw unavailable("stream info", e);
        }
    }

    private void ensure(Kind kind, String projectId) throws CdcFailure {
        String name = streamName(kind, projectId);
        if (known.contains(name)) {
            return;
        }
        long maxPayload = Math.max(0, publisher.maxPayload());
        StreamConfiguration.Builder b = StreamConfiguration.builder()
                .name(name)
                .subjects(subject(kind, projectId))
                .storageType(settings.fileStorage() ? StorageType.File : StorageType.Memory)
                .replicas(settings.replicas())
                .retentionPolicy(RetentionPolicy.Limits)
                .duplicateWindow(DUPLICATE_WINDOW)
                .allowDirect(false);
        if (kind == Kind.LATE) {
            // our own accounting bounds the lane (LateLane); JetStream's bound is a backstop above it
            b.discardPolicy(DiscardPolicy.New)
                    .maxBytes(settings.lateBytes() + Math.min(maxPayload, 64L << 20) + HEADER_ROOM)
                    .maxAge(LATE_MAX_AGE);
        } else {
            b.discardPolicy(DiscardPolicy.Old)
                    .maxBytes(settings.quarantineBytes())
                    .maxAge(settings.quarantineMaxAge());
        }
        StreamConfiguration wanted = b.build();
        JetStreamManagement jsm = jsm();
        try {
            StreamConfiguration c = jsm.getStreamInfo(name).getConfiguration();
            if (c.getMaxBytes() != wanted.getMaxBytes() || !c.getMaxAge().equals(wanted.getMaxAge())) {
                jsm.updateStream(wanted);
            }
        } catch (JetStreamApiException notFound) {
            try {
                jsm.addStream(wanted);
            } catch (JetStreamApiException | IOException e) {
                throw unavailable("create " + name, e);
            }
        } catch (IOException e) {
            throw unavailable("create " + name, e);
        }
        known.add(name);
    }

    private static MessageInfo get(JetStreamManagement jsm, String stream, long seq) throws CdcFailure {
        try {
            return jsm.getMessage(stream, seq);
        } catch (JetStreamApiException e) {
            return null; // removed (purged, aged out, deleted)
        } catch (IOException e) {
            throw unavailable("read", e);
        }
    }

    private JetStreamManagement jsm() throws CdcFailure {
        try {
            return nats.jetStreamManagement();
        } catch (IOException | RuntimeException e) {
            throw unavailable("JetStream", e);
        }
    }

    private static CdcFailure unavailable(String what, Exception e) {
        return CdcFailure.retriable(CdcReason.NATS_UNAVAILABLE, "held changes: " + what + ": " + e.getMessage(), e);
    }
}
