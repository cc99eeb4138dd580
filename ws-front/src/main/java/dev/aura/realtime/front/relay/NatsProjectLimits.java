package dev.aura.realtime.front.relay;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.aura.realtime.common.wire.ProjectLimits;
import dev.aura.realtime.common.wire.Subjects;
import dev.aura.realtime.front.log.LogCode;
import io.nats.client.Connection;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each project's limit overrides, asked from a cdc-worker on {@link Subjects#PROJECT_LIMITS}
 * (request/reply; any worker answers from {@code aura_platform.project_limits}) and cached for
 * {@code PROJECT_LIMITS_REFRESH_MS}. Never blocks a caller: the first look-up of a project
 * answers {@link ProjectLimits#DEFAULTS} and asks in the background; a stale entry is answered
 * while it is asked again; a failed ask keeps what was known and is retried after a refresh
 * period. So a change to the table reaches every replica within one refresh period (plus one
 * request), and the very first connections of a project use the global defaults for the few
 * milliseconds the answer takes.
 *
 * <p>Entries exist only for projects whose signed tokens reached this replica; they are
 * forgotten after ten refresh periods without a look-up. Thread-safe.
 */
public final class NatsProjectLimits implements ProjectLimitsSource {
    private static final Logger log = LoggerFactory.getLogger(NatsProjectLimits.class);

    private record Cached(ProjectLimits limits, long fetchedAtMs, boolean asking, long lastReadMs) {}

    /** How soon a failed first ask of a project is repeated. */
    static final long RETRY_UNKNOWN_MS = 200;

    private final Connection connection;
    private final ObjectMapper mapper;
    private final Clock clock;
    private final long refreshMs;
    private final Duration timeout;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();
    private volatile long lastSweepMs;
    /** Projects a cdc-worker answered for at least once (bounded by the cache: swept with it). */
    private final java.util.Set<String> answered = ConcurrentHashMap.newKeySet();

    @Override
    public boolean known(String projectId) {
        return answered.contains(projectId);
    }

    public NatsProjectLimits(
            Connection connection, ObjectMapper mapper, Clock clock, Duration refresh, Duration timeout) {
        this.connection = connection;
        this.mapper = mapper;
        this.clock = clock;
        this.refreshMs = refresh.toMillis();
        this.timeout = timeout;
    }

    @Override
    public ProjectLimits overrides(String projectId) {
        long now = clock.millis();
        boolean[] ask = new boolean[1];
        Cached c = cache.compute(projectId, (k, old) -> {
            if (old == null) {
                ask[0] = true;
                return new Cached(ProjectLimits.DEFAULTS, now, true, now);
            }
            if (!old.asking() && now - old.fetchedAtMs() >= refreshMs) {
                ask[0] = true;
                return new Cached(old.limits(), old.fetchedAtMs(), true, now);
            }
            return old.lastReadMs() == now ? old : new Cached(old.limits(), old.fetchedAtMs(), old.asking(), now);
        });
        if (ask[0]) {
            ask(projectId);
        }
        sweep(now);
        return c.limits();
    }

    private void ask(String projectId) {
        byte[] body;
        try {
            body = mapper.writeValueAsBytes(new ProjectLimits.Request(projectId));
        } catch (IOException e) {
            throw new IllegalStateException("a two-field record always serialises", e);
        }
        try {
            connection
                    .requestWithTimeout(Subjects.PROJECT_LIMITS, body, timeout)
                    .whenComplete((msg, err) -> {
                        ProjectLimits answer = null;
                        if (err == null) {
                            try {
                                answer = mapper.readValue(msg.getData(), ProjectLimits.class);
                            } catch (IOException | RuntimeException e) {
                                err = e;
                            }
                        }
                        if (err != null) {
                            LogCode.ProjectLimitsUnavailable.warn(
                                    log, "{}: keeping the last known limits: {}", projectId, err.toString());
                        }
                        ProjectLimits known = answer;
                        long at = clock.millis();
                        // a project never answered is asked again soon (its first joins wait for it), not after a
                        // period
                        long dated =
                                known == null && !answered.contains(projectId) ? at - refreshMs + RETRY_UNKNOWN_MS : at;
                        Cached before = cache.get(projectId);
                        cache.compute(
                                projectId,
                                (k, old) -> new Cached(
                                        known != null ? known : old == null ? ProjectLimits.DEFAULTS : old.limits(),
                                        dated,
                                        false,
                                        old == null ? at : old.lastReadMs()));
                        if (known != null
                                && (!answered.contains(projectId)
                                        || before == null
                                        || before.limits().resumeSeconds() != known.resumeSeconds())) {
                            // rare (a project's first answer, a changed window): says why a join is resumable or not
                            log.info(
                                    "project {}: postgres_changes resume window {} s",
                                    projectId,
                                    known.resumeSeconds());
                        }
                        if (known != null) {
                            // only once overrides() answers it: known() must never pair with the defaults
                            answered.add(projectId);
                        }
                    });
        } catch (RuntimeException e) { // closed or never-connected connection
            LogCode.ProjectLimitsUnavailable.warn(log, "{}: {}", projectId, e.toString());
            long at = clock.millis();
            long dated = answered.contains(projectId) ? at : at - refreshMs + RETRY_UNKNOWN_MS;
            cache.computeIfPresent(projectId, (k, old) -> new Cached(old.limits(), dated, false, old.lastReadMs()));
        }
    }

    private void sweep(long now) {
        long idle = 10 * refreshMs;
        if (now - lastSweepMs < refreshMs) {
            return;
        }
        lastSweepMs = now;
        // a project is forgotten as known BEFORE its answer leaves the cache: known() must never pair
        // with the defaults a re-created entry starts with
        cache.entrySet().removeIf(e -> {
            boolean idleEntry = !e.getValue().asking() && now - e.getValue().lastReadMs() > idle;
            if (idleEntry) {
                answered.remove(e.getKey());
            }
            return idleEntry;
        });
    }
}
