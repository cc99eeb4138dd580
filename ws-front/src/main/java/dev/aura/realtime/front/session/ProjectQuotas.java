package dev.aura.realtime.front.session;

import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.relay.ProjectLimitsSource;
import dev.aura.realtime.front.relay.UsageBoard;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The per-project limits of this replica (docs/design.md D8): connections, joins, client
 * messages, payload bytes and presence events per project, each checked against this replica's
 * own count plus the other replicas' last reports ({@link UsageBoard}). Thread-safe: every event
 * loop and the transport call it.
 *
 * <p>How far off the cluster-wide count can be: another replica's counts arrive at most one
 * report interval ({@code PROJECT_USAGE_INTERVAL_MS}, 1 s) plus NATS latency late. Connections
 * opened elsewhere during that time are not seen yet, so a project may briefly hold up to
 * {@code limit + (connections opened on the other replicas within one interval)}. Rates are
 * counted per wall-clock second; a replica subtracts what the others admitted in their last whole
 * second, so a steady load is held at the limit, while the first second of a burst that starts on
 * N replicas at once can admit up to N times the limit before the reports catch up. A single
 * message larger than the bytes-per-second limit is admitted when the second's budget is not yet
 * spent (the payload-size limit bounds it), so bytes per second may exceed the limit by one
 * payload.
 */
public final class ProjectQuotas {
    /** A project with no connection and no activity for this long is forgotten. */
    private static final long IDLE_MS = 10_000;

    private final ProjectQuota defaults;
    private final ProjectLimitsSource overrides;
    private final UsageBoard others;
    private final Clock clock;
    private final Map<String, Counters> projects = new ConcurrentHashMap<>();

    public ProjectQuotas(ProjectQuota defaults, ProjectLimitsSource overrides, UsageBoard others, Clock clock) {
        this.defaults = defaults;
        this.overrides = overrides;
        this.others = others;
        this.clock = clock;
    }

    /** The limits in force for {@code projectId} now. */
    public ProjectQuota quota(String projectId) {
        return defaults.with(overrides.overrides(projectId));
    }

    /** A held connection slot; {@link #release} is idempotent. */
    public static final class Permit {
        private final Counters counters;
        private final AtomicBoolean released = new AtomicBoolean();

        private Permit(Counters counters) {
            this.counters = counters;
        }

        public void release() {
            if (released.compareAndSet(false, true)) {
                synchronized (counters) {
                    counters.users--;
                }
            }
        }
    }

    /**
     * Takes a connection slot of {@code projectId}.
     *
     * @return null when the project has {@code max_concurrent_users} connections already
     */
    public Permit admitConnection(String projectId) {
        int limit =
                quota(projectId).maxConcurrentUsers() - others.others(projectId).users();
        long now = clock.millis();
        Permit[] out = new Permit[1];
        projects.compute(projectId, (k, c) -> {
            Counters counters = c == null ? new Counters() : c;
            synchronized (counters) {
                counters.lastActiveMs = now;
                if (counters.users < limit) {
                    counters.users++;
                    out[0] = new Permit(counters);
                }
            }
            return counters;
        });
        return out[0];
    }

    /** Counts one join of {@code projectId}; false when the project's joins per second are spent. */
    public boolean tryJoin(String projectId) {
        return admit(projectId, Kind.JOINS, 1, quota(projectId).maxJoinsPerSecond());
    }

    /**
     * Counts one client message of {@code payloadBytes}; false when the project's messages or
     * bytes per second are spent (nothing is counted then).
     */
    public boolean tryMessage(String projectId, long payloadBytes) {
        ProjectQuota q = quota(projectId);
        UsageReport.Counts elsewhere = others.others(projectId);
        long now = clock.millis();
        Counters c = counters(projectId, now);
        synchronized (c) {
            c.roll(now);
            if (c.current[Kind.EVENTS.ordinal()] >= q.maxEventsPerSecond() - elsewhere.events()
                    || c.current[Kind.BYTES.ordinal()] >= q.maxBytesPerSecond() - elsewhere.bytes()) {
                return false;
            }
            c.current[Kind.EVENTS.ordinal()]++;
            c.current[Kind.BYTES.ordinal()] += payloadBytes;
            return true;
        }
    }

    /** Counts one presence event; false when the project's presence events per second are spent. */
    public boolean tryPresence(String projectId) {
        return admit(projectId, Kind.PRESENCE, 1, quota(projectId).maxPresenceEventsPerSecond());
    }

    private boolean admit(String projectId, Kind kind, long amount, long limit) {
        UsageReport.Counts elsewhere = others.others(projectId);
        long othersCount = switch (kind) {
            case JOINS -> elsewhere.joins();
            case PRESENCE -> elsewhere.presence();
            case EVENTS -> elsewhere.events();
            case BYTES -> elsewhere.bytes();
        };
        long now = clock.millis();
        Counters c = counters(projectId, now);
        synchronized (c) {
            c.roll(now);
            if (c.current[kind.ordinal()] >= limit - othersCount) {
                return false;
            }
            c.current[kind.ordinal()] += amount;
            return true;
        }
    }

    private Counters counters(String projectId, long now) {
        Counters c = projects.computeIfAbsent(projectId, k -> new Counters());
        c.lastActiveMs = now;
        return c;
    }

    /**
     * This replica's counts for the usage report: per project with connections or recent
     * activity, its connections now and the last whole second's admissions. Forgets idle projects.
     */
    public Map<String, UsageReport.Counts> usage() {
        long now = clock.millis();
        Map<String, UsageReport.Counts> out = new HashMap<>();
        for (String projectId : projects.keySet()) {
            projects.computeIfPresent(projectId, (k, c) -> {
                synchronized (c) {
                    c.roll(now);
                    if (c.users == 0 && now - c.lastActiveMs > IDLE_MS) {
                        return null;
                    }
                    long[] p = c.previous;
                    out.put(
                            k,
                            new UsageReport.Counts(
                                    c.users,
                                    (int) p[Kind.JOINS.ordinal()],
                                    (int) p[Kind.EVENTS.ordinal()],
                                    p[Kind.BYTES.ordinal()],
                                    (int) p[Kind.PRESENCE.ordinal()]));
                }
                return c;
            });
        }
        return out;
    }

    /** Connections of {@code projectId} on this replica. */
    public int localUsers(String projectId) {
        Counters c = projects.get(projectId);
        if (c == null) {
            return 0;
        }
        synchronized (c) {
            return c.users;
        }
    }

    private enum Kind {
        JOINS,
        EVENTS,
        BYTES,
        PRESENCE
    }

    /** One project's counts; guarded by its own monitor. */
    private static final class Counters {
        int users;
        volatile long lastActiveMs;
        /** Wall-clock second ({@code ms / 1000}) that {@link #current} counts. */
        long second = Long.MIN_VALUE;

        final long[] current = new long[Kind.values().length];
        /** The counts of the second before {@link #second}, zero when that second saw nothing. */
        final long[] previous = new long[Kind.values().length];

        void roll(long nowMs) {
            long s = nowMs / 1000;
            if (s == second) {
                return;
            }
            for (int i = 0; i < current.length; i++) {
                previous[i] = s == second + 1 ? current[i] : 0;
                current[i] = 0;
            }
            second = s;
        }
    }
}
