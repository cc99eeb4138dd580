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
    public final Counter polls;
    public final Timer pollDuration;
    public final DistributionSummary batchRows;
    public final Counter slotRecreations;
    public final Counter publishFailures;
    public final Counter rlsQueries;
    public final Counter rlsDenied;
    public final Counter rlsErrors;
    private final AtomicLong lagBytes = new AtomicLong();
    private final AtomicLong redecodeBytes = new AtomicLong();
    private final AtomicLong retainedBytes = new AtomicLong();
    private final AtomicLong safeWalSize = new AtomicLong(-1);
    private final AtomicLong active = new AtomicLong();

    public CdcMetrics(MeterRegistry registry) {
        eventsPublished = Counter.builder("aura.cdc.events.published")
                .description("Change events published to NATS")
                .register(registry);
        eventsUnmatched = Counter.builder("aura.cdc.events.unmatched")
                .description("Changes no subscriber was allowed to see (not published)")
                .register(registry);
        polls = Counter.builder("aura.cdc.polls")
                .description("Slot polls (peek calls)")
                .register(registry);
        pollDuration = Timer.builder("aura.cdc.poll.duration")
                .description("Duration of a poll: peek, publish, flush, advance")
                .register(registry);
        batchRows = DistributionSummary.builder("aura.cdc.batch.rows")
                .description("Rows returned by one peek (incl. B/C rows)")
                .register(registry);
        slotRecreations = Counter.builder("aura.cdc.slot.recreations")
                .description("Lost slots dropped and recreated (changes lost)")
                .register(registry);
        publishFailures = Counter.builder("aura.cdc.publish.failures")
                .description("Batches not confirmed by NATS (slot not advanced, batch retried)")
                .register(registry);
        rlsQueries = Counter.builder("aura.cdc.rls.queries")
                .description("RLS check queries issued")
                .register(registry);
        rlsDenied = Counter.builder("aura.cdc.rls.denied")
                .description("(change, subscriber) pairs denied by RLS")
                .register(registry);
        rlsErrors = Counter.builder("aura.cdc.rls.errors")
                .description("RLS checks that raised (subscriber denied, fail closed)")
                .register(registry);
        Gauge.builder("aura.cdc.slot.lag.bytes", lagBytes, AtomicLong::get)
                .description("pg_current_wal_flush_lsn - confirmed_flush_lsn")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder("aura.cdc.slot.redecode.bytes", redecodeBytes, AtomicLong::get)
                .description("confirmed_flush_lsn - restart_lsn: WAL each poll re-decodes")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder("aura.cdc.slot.retained.bytes", retainedBytes, AtomicLong::get)
                .description("WAL retained by the slot (flush - restart_lsn)")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder("aura.cdc.slot.safe.wal.size", safeWalSize, AtomicLong::get)
                .description("safe_wal_size of the slot (-1 when unlimited)")
                .baseUnit("bytes")
                .register(registry);
        Gauge.builder("aura.cdc.active", active, AtomicLong::get)
                .description("1 when cdc_active")
                .register(registry);
    }

    public void slot(long lag, long redecode, long retained, Long safeWal) {
        lagBytes.set(lag);
        redecodeBytes.set(redecode);
        retainedBytes.set(retained);
        safeWalSize.set(safeWal == null ? -1 : safeWal);
    }

    public void active(boolean isActive) {
        active.set(isActive ? 1 : 0);
    }
}
