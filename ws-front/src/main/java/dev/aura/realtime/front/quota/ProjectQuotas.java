package dev.aura.realtime.front.quota;

import dev.aura.realtime.common.wire.UsageReport;
import dev.aura.realtime.front.protocol.Reasons;
import dev.aura.realtime.front.relay.BucketLedger;
import dev.aura.realtime.front.relay.BucketUsage;
import dev.aura.realtime.front.relay.ProjectLimitsSource;
import dev.aura.realtime.front.relay.UsageBoard;
import java.time.Clock;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
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
 *
 * <p>A join costs one join and the subscription checks it causes ({@link #admitJoin}); both are
 * counted in the same second. The bytes of the project in the registry and presence buckets are
 * not counted here but by the buckets' {@link BucketLedger}s; their totals go out in the same
 * report, and {@link #registryShares()} / {@link #presenceShares()} give each bucket its
 * project's share and what the other replicas hold of it.
 */
public final class ProjectQuotas {
    /** A project with no connection and no activity for this long is forgotten. */
    private static final long IDLE_MS = 10_000;

    private final ProjectQuota defaults;
    private final ProjectLimitsSource overrides;
    private final UsageBoard others;
    private final Clock clock;
    private final BucketUsage registryBytes;
    private final BucketUsage presenceBytes;
    private final BucketUsage resumeBytes;
    private final Map<String, ProjectCounters> projects = new ConcurrentHashMap<>();

    public ProjectQuotas(ProjectQuota defaults, ProjectLimitsSource overrides, UsageBoard others, Clock clock) {
        this(defaults, overrides, others, clock, BucketUsage.NONE, BucketUsage.NONE);
    }

    /**
     * @param registryBytes this replica's bytes per project in the registry bucket (reported)
     * @param presenceBytes this replica's bytes per project in the presence bucket (reported)
     */
    public ProjectQuotas(
            ProjectQuota defaults,
            ProjectLimitsSource overrides,
            UsageBoard others,
            Clock clock,
            BucketUsage registryBytes,
            BucketUsage presenceBytes) {
        this(defaults, overrides, others, clock, registryBytes, presenceBytes, BucketUsage.NONE);
    }

    /** @param resumeBytes this replica's bytes per project in the {@code aura_resume} bucket (reported) */
    public ProjectQuotas(
            ProjectQuota defaults,
            ProjectLimitsSource overrides,
            UsageBoard others,
            Clock clock,
            BucketUsage registryBytes,
            BucketUsage presenceBytes,
            BucketUsage resumeBytes) {
        this.defaults = defaults;
        this.overrides = overrides;
        this.others = others;
        this.clock = clock;
        this.registryBytes = registryBytes;
        this.presenceBytes = presenceBytes;
        this.resumeBytes = resumeBytes;
    }

    /** Each project's share of the registry bucket and the other replicas' bytes of it. */
    public BucketLedger.Shares registryShares() {
        return new BucketLedger.Shares() {
            @Override
            public long share(String projectId) {
                return quota(projectId).maxRegistryBytes();
            }

            @Override
            public long elsewhere(String projectId) {
                return others.others(projectId).registryBytes();
            }
        };
    }

    /** Each project's share of the presence bucket and the other replicas' bytes of it. */
    public BucketLedger.Shares presenceShares() {
        return new BucketLedger.Shares() {
            @Override
            public long share(String projectId) {
                return quota(projectId).maxPresenceBytes();
            }

            @Override
            public long elsewhere(String projectId) {
                return others.others(projectId).presenceBytes();
            }
        };
    }

    /** Each project's share of the {@code aura_resume} bucket and the other replicas' bytes of it. */
    public BucketLedger.Shares resumeShares() {
        return new BucketLedger.Shares() {
            @Override
            public long share(String projectId) {
                return quota(projectId).maxResumeBytes();
            }

            @Override
            public long elsewhere(String projectId) {
                return others.others(projectId).resumeBytes();
            }
        };
    }

    /** The limits in force for {@code projectId} now. */
    public ProjectQuota quota(String projectId) {
        return defaults.with(overrides.overrides(projectId));
    }

    /** A held connection slot; {@link #release} is idempotent. */
    public static final class Permit {
        private final ProjectCounters counters;
        private final AtomicBoolean released = new AtomicBoolean();

        private Permit(ProjectCounters counters) {
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
            ProjectCounters counters = c == null ? new ProjectCounters() : c;
            synchronized (counters) {
                counters.lastActiveMs = now;
                if (counters.users < limit) {
                    counters.users++;
                    out[0] = new Permit(counters);
                } else {
                    counters.refuse(Refusal.CONNECTIONS, now);
                }
            }
            return counters;
        });
        return out[0];
    }

    /** Counts one join of {@code projectId} that causes no check; false when the project's joins per second are spent. */
    public boolean tryJoin(String projectId) {
        return admitJoin(projectId, 0) == null;
    }

    /**
     * Counts one join of {@code projectId} and the {@code checks} subscription checks it causes
     * (its distinct postgres_changes bindings, plus one for a private channel's read check).
     * Nothing is counted when refused. A join needing more checks than the project's whole budget
     * is always refused.
     *
     * @return null when admitted, else the reason: {@link Reasons#PROJECT_TOO_MANY_JOINS} or
     *     {@link Reasons#tooManyChecks}
     */
    public String admitJoin(String projectId, int checks) {
        ProjectQuota q = quota(projectId);
        UsageReport.Counts elsewhere = others.others(projectId);
        long now = clock.millis();
        ProjectCounters c = counters(projectId, now);
        synchronized (c) {
            c.roll(now);
            if (c.current[ProjectCounters.Kind.JOINS.ordinal()] >= q.maxJoinsPerSecond() - elsewhere.joins()) {
                c.refuse(Refusal.JOINS, now);
                return Reasons.PROJECT_TOO_MANY_JOINS;
            }
            if (checks > 0
                    && c.current[ProjectCounters.Kind.CHECKS.ordinal()] + checks
                            > (long) q.maxChecksPerSecond() - elsewhere.checks()) {
                c.refuse(Refusal.CHECKS, now);
                return Reasons.tooManyChecks(checks, q.maxChecksPerSecond());
            }
            c.current[ProjectCounters.Kind.JOINS.ordinal()]++;
            c.current[ProjectCounters.Kind.CHECKS.ordinal()] += checks;
            return null;
        }
    }

    /**
     * Counts one client message of {@code payloadBytes}; false when the project's messages or
     * bytes per second are spent (nothing is counted then).
     */
    public boolean tryMessage(String projectId, long payloadBytes) {
        ProjectQuota q = quota(projectId);
        UsageReport.Counts elsewhere = others.others(projectId);
        long now = clock.millis();
        ProjectCounters c = counters(projectId, now);
        synchronized (c) {
            c.roll(now);
            if (c.current[ProjectCounters.Kind.EVENTS.ordinal()] >= q.maxEventsPerSecond() - elsewhere.events()
                    || c.current[ProjectCounters.Kind.BYTES.ordinal()] >= q.maxBytesPerSecond() - elsewhere.bytes()) {
                c.refuse(Refusal.MESSAGES, now);
                return false;
            }
            c.current[ProjectCounters.Kind.EVENTS.ordinal()]++;
            c.current[ProjectCounters.Kind.BYTES.ordinal()] += payloadBytes;
            return true;
        }
    }

    /** Counts one presence event; false when the project's presence events per second are spent. */
    public boolean tryPresence(String projectId) {
        return admit(
                projectId,
                ProjectCounters.Kind.PRESENCE,
                1,
                quota(projectId).maxPresenceEventsPerSecond(),
                Refusal.PRESENCE);
    }

    private boolean admit(String projectId, ProjectCounters.Kind kind, long amount, long limit, Refusal refusal) {
        UsageReport.Counts elsewhere = others.others(projectId);
        long othersCount = switch (kind) {
            case JOINS -> elsewhere.joins();
            case CHECKS -> elsewhere.checks();
            case PRESENCE -> elsewhere.presence();
            case EVENTS -> elsewhere.events();
            case BYTES -> elsewhere.bytes();
            case REFUSED -> 0;
        };
        long now = clock.millis();
        ProjectCounters c = counters(projectId, now);
        synchronized (c) {
            c.roll(now);
            if (c.current[kind.ordinal()] >= limit - othersCount) {
                c.refuse(refusal, now);
                return false;
            }
            c.current[kind.ordinal()] += amount;
            return true;
        }
    }

    private ProjectCounters counters(String projectId, long now) {
        ProjectCounters c = projects.computeIfAbsent(projectId, k -> new ProjectCounters());
        c.lastActiveMs = now;
        return c;
    }

    /**
     * This replica's counts for the usage report: per project with connections, recent activity
     * or bytes in a bucket, its connections now, the last whole second's admissions and its bytes
     * in the registry and presence buckets now. Forgets idle projects.
     */
    public Map<String, UsageReport.Counts> usage() {
        long now = clock.millis();
        Map<String, Long> registry = registryBytes.totals();
        Map<String, Long> presence = presenceBytes.totals();
        Map<String, Long> resume = resumeBytes.totals();
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
                                    (int) p[ProjectCounters.Kind.JOINS.ordinal()],
                                    (int) p[ProjectCounters.Kind.EVENTS.ordinal()],
                                    p[ProjectCounters.Kind.BYTES.ordinal()],
                                    (int) p[ProjectCounters.Kind.PRESENCE.ordinal()],
                                    (int) Math.min(Integer.MAX_VALUE, p[ProjectCounters.Kind.CHECKS.ordinal()]),
                                    registry.getOrDefault(k, 0L),
                                    presence.getOrDefault(k, 0L),
                                    resume.getOrDefault(k, 0L),
                                    (int) Math.min(Integer.MAX_VALUE, p[ProjectCounters.Kind.REFUSED.ordinal()])));
                }
                return c;
            });
        }
        for (Map<String, Long> bytes : List.of(registry, presence, resume)) {
            for (String projectId : bytes.keySet()) {
                out.computeIfAbsent(
                        projectId,
                        k -> new UsageReport.Counts(
                                0,
                                0,
                                0,
                                0,
                                0,
                                0,
                                registry.getOrDefault(k, 0L),
                                presence.getOrDefault(k, 0L),
                                resume.getOrDefault(k, 0L),
                                0));
            }
        }
        return out;
    }

    /** Connections of {@code projectId} on this replica. */
    public int localUsers(String projectId) {
        ProjectCounters c = projects.get(projectId);
        if (c == null) {
            return 0;
        }
        synchronized (c) {
            return c.users;
        }
    }

    /** {@code projectId}'s use now, on this replica and the others (any thread). */
    public ProjectUsage usage(String projectId) {
        long now = clock.millis();
        UsageReport.Counts here = new UsageReport.Counts(0, 0, 0, 0, 0);
        Map<Refusal, Long> refused = new EnumMap<>(Refusal.class);
        for (Refusal r : Refusal.values()) {
            refused.put(r, 0L);
        }
        ProjectCounters c = projects.get(projectId);
        if (c != null) {
            synchronized (c) {
                c.roll(now);
                long[] p = c.previous;
                here = new UsageReport.Counts(
                        c.users,
                        (int) p[ProjectCounters.Kind.JOINS.ordinal()],
                        (int) p[ProjectCounters.Kind.EVENTS.ordinal()],
                        p[ProjectCounters.Kind.BYTES.ordinal()],
                        (int) p[ProjectCounters.Kind.PRESENCE.ordinal()],
                        (int) Math.min(Integer.MAX_VALUE, p[ProjectCounters.Kind.CHECKS.ordinal()]),
                        registryBytes.totals().getOrDefault(projectId, 0L),
                        presenceBytes.totals().getOrDefault(projectId, 0L),
                        resumeBytes.totals().getOrDefault(projectId, 0L),
                        (int) Math.min(Integer.MAX_VALUE, p[ProjectCounters.Kind.REFUSED.ordinal()]));
                for (Refusal r : Refusal.values()) {
                    refused.put(r, c.refusedTotal[r.ordinal()]);
                }
            }
        }
        return new ProjectUsage(here, others.others(projectId), refused, quota(projectId));
    }
}
