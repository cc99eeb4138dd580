package dev.aura.realtime.cdc.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The cdc-worker's meters, named once here (Prometheus names in docs/operations.md): all start
 * with {@code aura_cdc_}. Thread-safe.
 */
public final class CdcMetrics {
    public final Counter eventsPublished;
    public final Counter eventsUnmatched;
    public final Counter eventsTooLarge;
    public final Counter polls;
    public final Timer pollDuration;
    public final DistributionSummary batchRows;
    public final Counter slotRecreations;
    public final Counter publishFailures;
    public final Counter rlsQueries;
    public final Counter rlsDenied;
    public final Counter rlsErrors;
    public final Counter rlsTimeouts;
    public final Counter rlsWithheld;
    public final Counter registryEntriesInvalid;
    public final Timer registrySync;
    public final Counter registryRewatchForced;
    public final Counter joinChecksJudged;
    public final Counter joinChecksReused;
    public final Counter joinChecksBusy;
    /** Changes handed to a late lane (docs/design.md C14). */
    public final Counter changesLate;

    private final MeterRegistry registry;
    private final AtomicLong lateProjects = new AtomicLong();
    private final AtomicLong lateBytes = new AtomicLong();
    private final AtomicLong lagBytes = new AtomicLong();
    private final AtomicLong redecodeBytes = new AtomicLong();
    private final AtomicLong retainedBytes = new AtomicLong();
    private final AtomicLong safeWalSize = new AtomicLong(-1);
    private final AtomicLong active = new AtomicLong();

    public CdcMetrics(MeterRegistry registry) {
        this.registry = registry;
        changesLate = counter(
                registry,
                "aura.cdc.changes.late",
                "Changes handed to their project's late lane because its checks were slow (docs/design.md C14)");
        Gauge.builder("aura.cdc.late.projects", lateProjects, AtomicLong::get)
                .description("Projects whose changes go through their late lane now")
                .register(registry);
        bytesGauge(registry, "aura.cdc.late.backlog.bytes", lateBytes, "Bytes waiting in every project's late lane");
        eventsPublished = counter(registry, "aura.cdc.events.published", "Change events published to NATS");
        eventsUnmatched = counter(
                registry, "aura.cdc.events.unmatched", "Changes no subscriber was allowed to see (not published)");
        eventsTooLarge = counter(
                registry,
                "aura.cdc.events.too.large",
                "Messages published with Error 413: their rows cut to values of at most 64 bytes");
        polls = counter(
                registry,
                "aura.cdc.polls",
                "Read rounds: slot polls (peek, publish, flush, advance) with CDC_SOURCE=poll, confirmations with stream");
        pollDuration = Timer.builder("aura.cdc.poll.duration")
                .description("Duration of a read round: a poll, or a stream's read up to a confirmation")
                .register(registry);
        batchRows = DistributionSummary.builder("aura.cdc.batch.rows")
                .description("wal2json rows (incl. B/C rows) read by one read round")
                .register(registry);
        slotRecreations =
                counter(registry, "aura.cdc.slot.recreations", "Lost slots dropped and recreated (changes lost)");
        publishFailures = counter(
                registry,
                "aura.cdc.publish.failures",
                "Batches not confirmed by NATS (slot not advanced, batch retried)");
        rlsQueries = counter(registry, "aura.cdc.rls.queries", "RLS check queries issued");
        joinChecksJudged = counter(
                registry,
                "aura.cdc.join.checks.judged",
                "Distinct postgres_changes bindings judged on the catalog at join (new, or their table's catalog"
                        + " version changed)");
        joinChecksReused = counter(
                registry,
                "aura.cdc.join.checks.reused",
                "Join-time binding checks answered from an earlier judgement at the same catalog version, or"
                        + " together with an identical check of the same batch");
        joinChecksBusy = counter(
                registry,
                "aura.cdc.join.checks.busy",
                "Join-time checks told to try again: their project's queue was full or they waited over a second");
        rlsDenied = counter(registry, "aura.cdc.rls.denied", "(change, subscriber) pairs denied by RLS");
        rlsErrors = counter(
                registry,
                "aura.cdc.rls.errors",
                "RLS checks that could not be done or raised (their subscribers denied, fail closed; logged with a code)");
        rlsTimeouts = counter(
                registry,
                "aura.cdc.rls.timeouts",
                "Tenant statements (RLS checks) ended by statement_timeout, lock_timeout or the watchdog");
        rlsWithheld = counter(
                registry,
                "aura.cdc.rls.withheld",
                "(change, subscriber) pairs withheld because the binding's filter tests a column its role may not"
                        + " select, or a non-key column of a DELETE on a table with row level security");
        registryEntriesInvalid = counter(
                registry,
                "aura.cdc.registry.entries.invalid",
                "Registry entries ignored as invalid (size, shape, project, role, claims or filter; logged RegistryEntryInvalid)");
        registryRewatchForced = counter(
                registry,
                "aura.cdc.registry.rewatch.forced",
                "Re-watches started because the registry view applied nothing for a sync timeout while the bucket was ahead (logged RegistryWatchStalled)");
        registrySync = Timer.builder("aura.cdc.registry.sync")
                .description("Read-your-writes wait of a batch: bucket sequence read plus catching up with it")
                .register(registry);
        bytesGauge(registry, "aura.cdc.slot.lag.bytes", lagBytes, "pg_current_wal_flush_lsn - confirmed_flush_lsn");
        bytesGauge(
                registry,
                "aura.cdc.slot.redecode.bytes",
                redecodeBytes,
                "confirmed_flush_lsn - restart_lsn: WAL each poll re-decodes");
        bytesGauge(
                registry,
                "aura.cdc.slot.retained.bytes",
                retainedBytes,
                "WAL retained by the slot (flush - restart_lsn)");
        bytesGauge(
                registry, "aura.cdc.slot.safe.wal.size", safeWalSize, "safe_wal_size of the slot (-1 when unlimited)");
        Gauge.builder("aura.cdc.active", active, AtomicLong::get)
                .description("1 when cdc_active")
                .register(registry);
    }

    private static Counter counter(MeterRegistry registry, String name, String description) {
        return Counter.builder(name).description(description).register(registry);
    }

    private static void bytesGauge(MeterRegistry registry, String name, AtomicLong value, String description) {
        Gauge.builder(name, value, AtomicLong::get)
                .description(description)
                .baseUnit("bytes")
                .register(registry);
    }

    public void slot(long lag, long redecode, long retained, Long safeWal) {
        lagBytes.set(lag);
        redecodeBytes.set(redecode);
        retainedBytes.set(retained);
        safeWalSize.set(safeWal == null ? -1 : safeWal);
    }

    /**
     * One change of {@code projectId} quarantined for {@code fault}: {@code
     * aura_cdc_quarantined_total{project, fault}} (docs/operations.md, "Quarantine").
     */
    public void quarantined(String projectId, String fault) {
        Counter.builder("aura.cdc.quarantined")
                .description(
                        "Changes kept in their project's quarantine instead of being delivered (docs/design.md C13)")
                .tag("project", projectId)
                .tag("fault", fault)
                .register(registry)
                .increment();
    }

    /** The late lanes now: projects in them and bytes waiting. */
    public void late(long projects, long bytes) {
        lateProjects.set(projects);
        lateBytes.set(bytes);
    }

    public void active(boolean isActive) {
        active.set(isActive ? 1 : 0);
    }
}
