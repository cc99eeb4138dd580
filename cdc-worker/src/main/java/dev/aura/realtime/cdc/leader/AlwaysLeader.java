package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.config.ElectionMode;
import dev.aura.realtime.cdc.config.LeaderConfig;
import dev.aura.realtime.cdc.fence.FencedException;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.fence.LeaderWork;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * No election: this process leads from {@link #start()} to {@link #close()}, with lease epoch 0.
 * Used for {@code LEADER_ELECTION=disabled} and for {@code auto} outside Kubernetes; start-up
 * logs a WARN, because two replicas in this mode both read the slot.
 *
 * <p>Threads: the work thread {@code aura-leader-work-1} (see {@link LeaderWork}).
 */
public final class AlwaysLeader implements LeaderElection {
    private static final Logger log = LoggerFactory.getLogger(AlwaysLeader.class);

    private final LeaderConfig config;
    private final WorkRunner runner;
    private final LeaderMetrics metrics;
    private final Gate gate = new Gate();
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();

    /** @param registry receives the transition counter and leader gauge */
    public AlwaysLeader(LeaderConfig config, LeaderWork work, MeterRegistry registry) {
        this.config = Objects.requireNonNull(config, "config");
        this.runner = new WorkRunner(work, config.retryPeriod());
        this.metrics = new LeaderMetrics(registry, this::status);
    }

    @Override
    public void start() {
        if (closed.get() || !started.compareAndSet(false, true)) {
            throw new IllegalStateException("start() may be called once, before close()");
        }
        String why = config.mode() == ElectionMode.DISABLED
                ? "LEADER_ELECTION=disabled"
                : "LEADER_ELECTION=auto and KUBERNETES_SERVICE_HOST is not set (not in a pod)";
        log.warn(
                "[LeaderElectionDisabled] {}: leading without a Lease as '{}'; run exactly one replica, two would both read the slot and "
                        + "publish every change twice",
                why,
                config.identity());
        metrics.acquired();
        runner.start(gate);
    }

    @Override
    public LeadershipStatus status() {
        boolean leading = started.get() && !closed.get();
        String reason = leading ? null : closed.get() ? "closed" : "not started";
        return new LeadershipStatus(leading, config.identity(), 0, LeadershipStatus.MODE_ALWAYS_LEADER, reason);
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (started.get()) {
            runner.stop(config.renewDeadline());
            metrics.lost();
        }
        log.info("always-leader stopped");
    }

    /** Passes until {@link #close()}. */
    private final class Gate implements LeaderGate {
        @Override
        public void checkFence() throws FencedException {
            if (closed.get()) {
                throw new FencedException("shutting down");
            }
        }

        @Override
        public long leaseEpoch() {
            return 0;
        }
    }
}
