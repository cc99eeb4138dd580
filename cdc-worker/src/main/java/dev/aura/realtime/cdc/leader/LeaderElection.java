package dev.aura.realtime.cdc.leader;

import dev.aura.realtime.cdc.config.LeaderConfig;
import dev.aura.realtime.cdc.fence.LeaderWork;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Decides whether this cdc-worker leads, and runs the {@link LeaderWork} only while it does.
 *
 * <p>Lifecycle: construct, {@link #start()} once, {@link #close()} on shutdown (idempotent).
 * {@code close()} stops the work first (interrupt, bounded wait) and only then gives up
 * leadership, so two workers never publish at the same time because of a shutdown.
 *
 * <p>Implementations: {@link LeaseLeaderElection} (Kubernetes Lease) and {@link AlwaysLeader}.
 */
public interface LeaderElection extends AutoCloseable {

    /** Begins acquiring leadership (or, always-leader, starts the work). Returns at once. */
    void start();

    /** The current state for {@code /health}; cheap, callable from any thread. */
    LeadershipStatus status();

    /** Stops the work, then releases the lease and stops every thread this object started. Idempotent. */
    @Override
    void close();

    /**
     * Chooses the implementation from {@code config.mode()}: a Lease (with a Kubernetes client
     * built by {@link LeaseClients#forElection(LeaderConfig)} and closed with the election) when
     * {@link LeaderConfig#usesKubernetes()}, otherwise {@link AlwaysLeader}.
     */
    static LeaderElection fromConfig(LeaderConfig config, LeaderWork work, MeterRegistry registry) {
        if (!config.usesKubernetes()) {
            return new AlwaysLeader(config, work, registry);
        }
        KubernetesClient client = LeaseClients.forElection(config);
        return new LeaseLeaderElection(config, client, true, work, registry, System::nanoTime);
    }
}
