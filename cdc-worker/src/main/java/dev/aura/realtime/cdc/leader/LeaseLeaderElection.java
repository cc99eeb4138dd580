package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.config.LeaderConfig;
import dev.aura.realtime.cdc.fence.LeaderGate;
import dev.aura.realtime.cdc.fence.LeaderWork;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfig;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectorBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaderElectionRecord;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leadership through a {@code coordination.k8s.io/v1} Lease, elected by fabric8's
 * {@code LeaderElector} with a {@code LeaseLock}; see {@link LeaderConfig} for the timings.
 *
 * <h2>Lifecycle</h2>
 * <ul>
 *   <li>{@link #start()} begins a campaign: a fabric8 elector tries to create or take over the
 *       Lease every retry period (plus fabric8's jitter).</li>
 *   <li>On acquiring, a new term begins: a fresh {@link LeaderGate} whose epoch is the Lease's
 *       {@code leaseTransitions}, and the {@link LeaderWork} on a new work thread.</li>
 *   <li>While leading, the elector renews every retry period. The gate trips as soon as the last
 *       successful renewal is older than the renew deadline, even if the API server hangs.</li>
 *   <li>When fabric8 gives up (renewal failed past the deadline, or another holder is seen), the
 *       term ends: the gate is revoked, the work thread interrupted and awaited (at most the
 *       renew deadline). A fabric8 elector is single-use, so after one retry period a new one
 *       campaigns again.</li>
 *   <li>{@link #close()} ends the term the same way first, then cancels the elector, which
 *       releases the Lease (empty holder) so a standby can take it on its next retry.</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * {@code aura-leader-elector} runs fabric8's acquire/renew steps and our callbacks (term start and
 * end, including waiting for the work to stop); {@code aura-leader-work-<term>} runs the work.
 * fabric8 also times its loops on its shared scheduler thread. The release on close runs on the
 * thread calling {@code close()}.
 */
public final class LeaseLeaderElection implements LeaderElection {
    private static final Logger log = LoggerFactory.getLogger(LeaseLeaderElection.class);

    private final LeaderConfig config;
    private final KubernetesClient client;
    private final boolean ownsClient;
    private final LongSupplier nanoClock;
    private final RenewTrackingLock lock;
    private final WorkRunner runner;
    private final LeaderMetrics metrics;
    private final ScheduledExecutorService electorThread;
    private final AtomicBoolean started = new AtomicBoolean();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Object termGuard = new Object();
    private volatile TermFence term; // written under termGuard
    private volatile CompletableFuture<?> elector;

    /**
     * @param client talks to the API server holding the Lease; not closed by this object. Use
     *     {@link LeaseClients#tune} so requests fail within the retry period.
     * @param registry receives the transition counter and leader gauge
     * @param nanoClock monotonic time in nanoseconds for the fence ({@code System::nanoTime})
     */
    public LeaseLeaderElection(
            LeaderConfig config,
            KubernetesClient client,
            LeaderWork work,
            MeterRegistry registry,
            LongSupplier nanoClock) {
        this(config, client, false, work, registry, nanoClock);
    }

    LeaseLeaderElection(
            LeaderConfig config,
            KubernetesClient client,
            boolean ownsClient,
            LeaderWork work,
            MeterRegistry registry,
            LongSupplier nanoClock) {
        this.config = Objects.requireNonNull(config, "config");
        this.client = Objects.requireNonNull(client, "client");
        this.ownsClient = ownsClient;
        this.nanoClock = Objects.requireNonNull(nanoClock, "nanoClock");
        this.lock = new RenewTrackingLock(
                new LeaseLock(config.leaseNamespace(), config.leaseName(), config.identity()), nanoClock);
        this.runner = new WorkRunner(work, config.retryPeriod());
        this.metrics = new LeaderMetrics(registry, this::status);
        ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
            Thread thread = new Thread(runnable, "aura-leader-elector");
            thread.setDaemon(true);
            return thread;
        });
        executor.setRemoveOnCancelPolicy(true);
        this.electorThread = executor;
    }

    @Override
    public void start() {
        if (closed.get() || !started.compareAndSet(false, true)) {
            throw new IllegalStateException("start() may be called once, before close()");
        }
        log.info(
                "campaigning for {} (lease {} ms, renew deadline {} ms, retry {} ms)",
                lock.describe(),
                config.leaseDuration().toMillis(),
                config.renewDeadline().toMillis(),
                config.retryPeriod().toMillis());
        electorThread.execute(this::campaign);
    }

    @Override
    public LeadershipStatus status() {
        TermFence current = term;
        LeaderElectionRecord observed = lock.lastObserved();
        String holder = observed == null || isBlank(observed.getHolderIdentity()) ? null : observed.getHolderIdentity();
        if (current != null) {
            String failure = current.failure();
            return failure == null
                    ? status(true, config.identity(), current.leaseEpoch(), null)
                    : status(false, holder, current.leaseEpoch(), "fenced: " + failure + apiErrorSuffix());
        }
        long epoch = observed == null ? 0 : observed.getLeaderTransitions();
        return status(false, holder, epoch, notLeadingReason(holder));
    }

    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        log.info("shutting down: stopping leader work, then releasing {}", lock.describe());
        endTerm("shutting down");
        CompletableFuture<?> current = elector;
        if (current != null) {
            current.cancel(true); // fabric8 releases the Lease here (releaseOnCancel), on this thread
        }
        electorThread.shutdownNow();
        try {
            if (!electorThread.awaitTermination(config.retryPeriod().toMillis(), TimeUnit.MILLISECONDS)) {
                log.warn(
                        "[ElectorStopTimeout] aura-leader-elector did not stop within {} ms",
                        config.retryPeriod().toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (ownsClient) {
            client.close();
        }
        LeaderElectionRecord last = lock.lastObserved();
        log.info("leader election closed; lease holder now {}", last == null ? "unknown" : last.getHolderIdentity());
    }

    /** One fabric8 elector's life: acquire, renew until lost; runs on {@code aura-leader-elector}. */
    private void campaign() {
        if (closed.get()) {
            return;
        }
        LeaderElectionConfig electionConfig = new LeaderElectionConfig(
                lock,
                config.leaseDuration(),
                config.renewDeadline(),
                config.retryPeriod(),
                new LeaderCallbacks(this::onStartLeading, this::onStopLeading, this::onNewLeader),
                true,
                config.leaseName());
        CompletableFuture<?> future;
        try {
            future = new LeaderElectorBuilder(client, electorThread)
                    .withConfig(electionConfig)
                    .build()
                    .start();
        } catch (RuntimeException e) {
            log.error(
                    "[ElectorStartFailed] could not start the leader elector; retrying in {} ms",
                    config.retryPeriod().toMillis(),
                    e);
            scheduleCampaign();
            return;
        }
        elector = future;
        future.whenComplete((ignored, failure) -> electorEnded(failure));
        if (closed.get()) {
            future.cancel(true); // close() ran between our check and publishing the future
        }
    }

    private void electorEnded(Throwable failure) {
        endTerm("leadership lost"); // normally done by onStopLeading already
        if (closed.get()) {
            return;
        }
        if (failure != null && !(failure instanceof CancellationException)) {
            log.warn(
                    "[ElectorFailed] leader elector failed; campaigning again in {} ms",
                    config.retryPeriod().toMillis(),
                    failure);
        } else {
            log.info(
                    "leader elector ended; campaigning again in {} ms",
                    config.retryPeriod().toMillis());
        }
        scheduleCampaign();
    }

    private void scheduleCampaign() {
        try {
            electorThread.schedule(this::campaign, config.retryPeriod().toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            log.debug("not campaigning again: shutting down");
        }
    }

    /** fabric8 callback, inside its synchronized acquire step: must not throw into fabric8's loop. */
    private void onStartLeading() {
        try {
            synchronized (termGuard) {
                if (closed.get() || term != null) {
                    return;
                }
                LeaderElectionRecord record = lock.lastObserved();
                TermFence fence = new TermFence(
                        lock, nanoClock, config.renewDeadline(), record == null ? 0 : record.getLeaderTransitions());
                term = fence;
                metrics.acquired();
                log.info("became leader of {} (lease epoch {})", lock.describe(), fence.leaseEpoch());
                runner.start(fence);
            }
        } catch (RuntimeException e) {
            log.error("[LeaderWorkTermFailed] could not start the leader work", e);
        }
    }

    private void onStopLeading() {
        try {
            endTerm("leadership lost");
        } catch (RuntimeException e) {
            log.error("[LeaderWorkTermFailed] could not stop the leader work", e);
        }
    }

    private void onNewLeader(String holder) {
        log.info("lease {} now held by {}", config.leaseName(), isBlank(holder) ? "nobody" : holder);
    }

    /** Revokes the current term's fence, then stops its work. Idempotent. */
    private void endTerm(String reason) {
        TermFence ended;
        synchronized (termGuard) {
            ended = term;
            term = null;
        }
        if (ended == null) {
            return;
        }
        ended.revoke(reason);
        log.warn("[LeadershipLost] {}: stopping leader work of lease epoch {}", reason, ended.leaseEpoch());
        runner.stop(config.renewDeadline());
        metrics.lost();
    }

    private String notLeadingReason(String holder) {
        if (closed.get()) {
            return "closed";
        }
        if (!started.get()) {
            return "not started";
        }
        if (lock.lastError() != null) {
            return "Kubernetes API unreachable or refusing the lease: " + lock.lastError();
        }
        if (holder != null && !holder.equals(config.identity())) {
            return "standby: lease " + config.leaseName() + " held by " + holder;
        }
        return "acquiring lease " + config.leaseName();
    }

    private String apiErrorSuffix() {
        String error = lock.lastError();
        return error == null ? "" : "; " + error;
    }

    private LeadershipStatus status(boolean leader, String holder, long epoch, String reason) {
        return new LeadershipStatus(leader, holder, epoch, LeadershipStatus.MODE_KUBERNETES, reason);
    }

    private static boolean isBlank(String value) {
        return value == null || value.isBlank();
    }
}
